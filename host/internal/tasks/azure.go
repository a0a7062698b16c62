package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// Names of the Azure Storage table and blob container of the tasks.
const (
	DefaultTable     = "funcmcptasks"
	DefaultContainer = "funcmcp-tasks"
)

// maxInlineRecord is the largest record kept in the table row itself; a
// larger one (a big result) goes to a blob, as a table property holds at
// most 64 KiB.
const maxInlineRecord = 30 << 10

// maxUpdateTries bounds the optimistic retries of one Update.
const maxUpdateTries = 32

// Azure is a [Store] in Azure Storage: one table row per task, the record
// (or, when it is large, the name of the blob holding it) in the row, so
// that every instance with the same storage account shares the tasks.
// Updates use the row's ETag: a writer that lost the race reads again.
type Azure struct {
	svc        *aztables.ServiceClient
	tableName  string
	table      *aztables.Client
	blobs      *azblob.Client
	container  string
	now        func() time.Time
	partitionK string
	kept       *keptCount
	results    *resultCache // results read from blobs, shared by their readers
}

// AzureOptions configures [NewAzure]. nil means the defaults.
type AzureOptions struct {
	Table, Container string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// TableURL, BlobURL and Credential open the store with an identity
	// (Microsoft Entra tokens) when the connection string is "".
	TableURL, BlobURL string
	Credential        azcore.TokenCredential
	// Transport sends the requests; nil means the default. Tests count
	// requests through it.
	Transport policy.Transporter
	// Tasks and TasksPerOwner bound the unexpired tasks this instance
	// makes, in all and of one owner (0: the defaults of [MemoryLimits]).
	// Each instance counts its own.
	Tasks, TasksPerOwner int64
}

// clientOptions bound each storage call (tryTimeout each try, three
// tries): a stalled storage account costs a caller a bounded time, not the
// SDK's default minutes. Blobs, which carry large results, get longer
// tries than table rows.
func clientOptions(t policy.Transporter, tryTimeout time.Duration) policy.ClientOptions {
	return policy.ClientOptions{
		Retry: policy.RetryOptions{
			MaxRetries:    2,
			TryTimeout:    tryTimeout,
			RetryDelay:    200 * time.Millisecond,
			MaxRetryDelay: 2 * time.Second,
		},
		Telemetry: policy.TelemetryOptions{Disabled: true},
		Transport: t,
	}
}

// NewAzure opens the task store of the storage account a connection string
// names (or, when it is "", the endpoints and credential of o), creating its
// table and container when missing.
func NewAzure(ctx context.Context, connectionString string, o *AzureOptions) (*Azure, error) {
	var opts AzureOptions
	if o != nil {
		opts = *o
	}
	if opts.Table == "" {
		opts.Table = DefaultTable
	}
	if opts.Container == "" {
		opts.Container = DefaultContainer
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var (
		svc   *aztables.ServiceClient
		blobs *azblob.Client
		err   error
	)
	to := &aztables.ClientOptions{ClientOptions: clientOptions(opts.Transport, 10*time.Second)}
	bo := &azblob.ClientOptions{ClientOptions: clientOptions(opts.Transport, time.Minute)}
	if connectionString != "" {
		svc, err = aztables.NewServiceClientFromConnectionString(connectionString, to)
	} else {
		svc, err = aztables.NewServiceClient(opts.TableURL, opts.Credential, to)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the task table: %w", err)
	}
	if connectionString != "" {
		blobs, err = azblob.NewClientFromConnectionString(connectionString, bo)
	} else {
		blobs, err = azblob.NewClient(opts.BlobURL, opts.Credential, bo)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the task blobs: %w", err)
	}
	l := MemoryLimits{Tasks: opts.Tasks, TasksPerOwner: opts.TasksPerOwner}.withDefaults()
	s := &Azure{svc: svc, tableName: opts.Table, table: svc.NewClient(opts.Table), blobs: blobs, container: opts.Container, now: opts.Now, partitionK: "task",
		kept: newKeptCount(opts.Now, l.TasksPerOwner, l.Tasks), results: newResultCache(resultCacheBytes)}
	if err := s.createTable(ctx); err != nil {
		return nil, err
	}
	if err := s.createContainer(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// createTable makes the table when it is missing (at start, and again
// when the storage lost it: an emulator restarted empty).
func (s *Azure) createTable(ctx context.Context) error {
	if _, err := s.svc.CreateTable(ctx, s.tableName, nil); err != nil && !hasCode(err, string(aztables.TableAlreadyExists)) {
		return fmt.Errorf("creating the task table %s: %w", s.tableName, err)
	}
	return nil
}

// createContainer makes the blob container when it is missing.
func (s *Azure) createContainer(ctx context.Context) error {
	if _, err := s.blobs.CreateContainer(ctx, s.container, nil); err != nil && !hasCode(err, "ContainerAlreadyExists") {
		return fmt.Errorf("creating the task container %s: %w", s.container, err)
	}
	return nil
}

// tableMissing reports whether err says the table does not exist.
func tableMissing(err error) bool { return hasCode(err, string(aztables.TableNotFound)) }

func hasCode(err error, code string) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.ErrorCode == code
}

func hasStatus(err error, status int) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == status
}

// row is a task's table entity.
type row struct {
	PartitionKey string
	RowKey       string
	// Expires is the task's expiry as a fixed-width UTC time, so that
	// expired rows can be found by string comparison.
	Expires string
	// Record is the task's JSON when small; RecordBlob names the blob that
	// holds it otherwise. A large result is not in the record: ResultBlob
	// names its blob, written once and never changed, so that later
	// writes of the task (a heartbeat, a cancel) do not copy it and a
	// reader never finds it gone while the task lives.
	Record     string `json:",omitempty"`
	RecordBlob string `json:",omitempty"`
	ResultBlob string `json:",omitempty"`
}

const expiresLayout = "2006-01-02T15:04:05.000Z"

// record is a task as stored.
type record struct {
	ID              string                     `json:"id"`
	Scope           string                     `json:"scope"`
	Owner           string                     `json:"owner,omitempty"`
	Tool            string                     `json:"tool,omitempty"`
	Function        string                     `json:"function,omitempty"`
	Instance        string                     `json:"instance,omitempty"`
	Trace           string                     `json:"trace,omitempty"`
	Status          Status                     `json:"status"`
	StatusMessage   string                     `json:"statusMessage,omitempty"`
	Created         time.Time                  `json:"created"`
	Updated         time.Time                  `json:"updated"`
	Heartbeat       time.Time                  `json:"heartbeat,omitzero"`
	TTLMs           int64                      `json:"ttlMs"`
	PollMs          int64                      `json:"pollMs,omitempty"`
	InputRequests   map[string]json.RawMessage `json:"inputRequests,omitempty"`
	InputResponses  map[string]json.RawMessage `json:"inputResponses,omitempty"`
	Result          json.RawMessage            `json:"result,omitempty"`
	Error           *jsonrpc.Error             `json:"error,omitempty"`
	CancelRequested bool                       `json:"cancelRequested,omitempty"`
	InstanceLost    bool                       `json:"instanceLost,omitempty"`
	Attempt         int                        `json:"attempt,omitempty"`
	Attempts        int                        `json:"attempts,omitempty"`
	Rerun           json.RawMessage            `json:"rerun,omitempty"`
}

func toRecord(t *Task) *record {
	return &record{ID: t.ID, Scope: t.Scope, Owner: string(t.Owner), Tool: t.Tool, Function: t.Function, Instance: t.Instance, Trace: t.Trace, Status: t.Status,
		StatusMessage: t.StatusMessage, Created: t.Created, Updated: t.Updated, Heartbeat: t.Heartbeat, TTLMs: t.TTL.Milliseconds(),
		PollMs: t.PollInterval.Milliseconds(), InputRequests: t.InputRequests, InputResponses: t.InputResponses,
		Result: t.Result, Error: t.Error, CancelRequested: t.CancelRequested, InstanceLost: t.InstanceLost,
		Attempt: t.Attempt, Attempts: t.Attempts, Rerun: t.Rerun}
}

func (r *record) task() *Task {
	return &Task{ID: r.ID, Scope: r.Scope, Owner: owner.ID(r.Owner), Tool: r.Tool, Function: r.Function, Instance: r.Instance, Trace: r.Trace, Status: r.Status,
		StatusMessage: r.StatusMessage, Created: r.Created, Updated: r.Updated, Heartbeat: r.Heartbeat, TTL: time.Duration(r.TTLMs) * time.Millisecond,
		PollInterval: time.Duration(r.PollMs) * time.Millisecond, InputRequests: r.InputRequests,
		InputResponses: r.InputResponses, Result: r.Result, Error: r.Error, CancelRequested: r.CancelRequested, InstanceLost: r.InstanceLost,
		Attempt: r.Attempt, Attempts: r.Attempts, Rerun: r.Rerun}
}

// recordJSON is t's record without its result, which travels apart when
// it is large.
func recordJSON(t *Task, withResult bool) ([]byte, error) {
	rec := toRecord(t)
	if !withResult {
		rec.Result = nil
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encoding task %s: %w", t.ID, err)
	}
	return data, nil
}

// stored is a task as read, with what its next write needs.
type stored struct {
	t    *Task
	row  *row
	etag azcore.ETag
	// rec is the record's JSON without the result; result the result as
	// read (t.Result until a change replaces it).
	rec    []byte
	result json.RawMessage
}

// encode makes the row of t, uploading what is large to new blobs; the
// names of the blobs it made are returned so that a failed write can
// remove them. A result unchanged since old was read keeps its blob.
func (s *Azure) encode(ctx context.Context, t *Task, old *stored) (*row, []string, error) {
	r := &row{PartitionKey: s.partitionK, RowKey: t.ID, Expires: t.Expires().UTC().Format(expiresLayout)}
	var made []string
	withResult := false
	switch {
	case old != nil && old.row.ResultBlob != "" && (t.Result == nil || bytes.Equal(t.Result, old.result)):
		r.ResultBlob = old.row.ResultBlob // unchanged (or not read: see Update)
	case len(t.Result) == 0:
	case len(t.Result) <= maxInlineRecord/2:
		withResult = true
	default:
		name := t.ID + "/result-" + ids.Random(ids.Base32Lower, 12)
		if err := s.upload(ctx, name, t.Result); err != nil {
			return nil, nil, fmt.Errorf("storing task %s: %w", t.ID, err)
		}
		r.ResultBlob, made = name, append(made, name)
	}
	data, err := recordJSON(t, withResult)
	if err != nil {
		return nil, made, err
	}
	if len(data) <= maxInlineRecord {
		r.Record = string(data)
		return r, made, nil
	}
	name := t.ID + "/record-" + ids.Random(ids.Base32Lower, 12)
	if err := s.upload(ctx, name, data); err != nil {
		return nil, made, fmt.Errorf("storing task %s: %w", t.ID, err)
	}
	r.RecordBlob, made = name, append(made, name)
	return r, made, nil
}

// upload writes a new blob, making the container again when the storage
// lost it.
func (s *Azure) upload(ctx context.Context, name string, data []byte) error {
	_, err := s.blobs.UploadBuffer(ctx, s.container, name, data, nil)
	if hasCode(err, "ContainerNotFound") {
		if err := s.createContainer(ctx); err != nil {
			return err
		}
		_, err = s.blobs.UploadBuffer(ctx, s.container, name, data, nil)
	}
	return err
}

// Create stores t; the table write is acknowledged before it returns. A
// table the storage lost is made again. An owner (or this instance) with
// as many unexpired tasks as it may keep is refused with an
// *owner.LimitError, and nothing is stored.
func (s *Azure) Create(ctx context.Context, t *Task) error {
	if !ValidID(t.ID) {
		return fmt.Errorf("storing task %q: %w", t.ID, ErrInvalidID)
	}
	release, err := s.kept.take(t.Owner, t.Expires())
	if err != nil {
		return err
	}
	r, made, err := s.encode(ctx, t, nil)
	if err != nil {
		release()
		s.deleteBlobs(ctx, made)
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		release()
		s.deleteBlobs(ctx, made)
		return err
	}
	_, err = s.table.AddEntity(ctx, data, nil)
	if tableMissing(err) {
		if err = s.createTable(ctx); err == nil {
			_, err = s.table.AddEntity(ctx, data, nil)
		}
	}
	if err != nil {
		release()
		s.deleteBlobs(ctx, made)
		return fmt.Errorf("storing task %s: %w", t.ID, err)
	}
	return nil
}

// maxReadTries bounds the reads of one task whose blob a writer replaced
// meanwhile.
const maxReadTries = 4

// load reads a task's row, record and result. A blob removed between the
// row's read and its own (a writer replaced it) makes it read the row
// again: a reader never fails because of a concurrent writer. An id not of
// the form NewID makes is not found without a storage call.
func (s *Azure) load(ctx context.Context, id string, withResult bool) (*stored, error) {
	if !ValidID(id) {
		return nil, ErrNotFound
	}
	var err error
	for range maxReadTries {
		var st *stored
		st, err = s.loadOnce(ctx, id, withResult)
		if err == nil || !hasCode(err, "BlobNotFound") {
			return st, err
		}
	}
	return nil, fmt.Errorf("reading task %s: %w", id, err)
}

func (s *Azure) loadOnce(ctx context.Context, id string, withResult bool) (*stored, error) {
	resp, err := s.table.GetEntity(ctx, s.partitionK, id, nil)
	if err != nil {
		if hasStatus(err, http.StatusNotFound) {
			return nil, ErrNotFound // no such row, or no table at all
		}
		return nil, fmt.Errorf("reading task %s: %w", id, err)
	}
	var r row
	if err := json.Unmarshal(resp.Value, &r); err != nil {
		return nil, fmt.Errorf("reading task %s: %w", id, err)
	}
	if expires, err := time.Parse(expiresLayout, r.Expires); err == nil && !s.now().Before(expires) {
		s.remove(ctx, &r, resp.ETag)
		return nil, ErrNotFound
	}
	data := []byte(r.Record)
	if r.RecordBlob != "" {
		if data, err = s.downloadAll(ctx, r.RecordBlob); err != nil {
			return nil, err
		}
	}
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("reading task %s: %w", id, err)
	}
	t := rec.task()
	if !s.now().Before(t.Expires()) {
		s.remove(ctx, &r, resp.ETag)
		return nil, ErrNotFound
	}
	if r.ResultBlob != "" && withResult {
		name := r.ResultBlob
		if t.Result, err = s.results.get(ctx, name, func(ctx context.Context) (json.RawMessage, error) { return s.downloadAll(ctx, name) }); err != nil {
			return nil, err
		}
	}
	st := &stored{t: t, row: &r, etag: resp.ETag, result: t.Result}
	if r.ResultBlob != "" || len(rec.Result) == 0 {
		st.rec = data
	} else if st.rec, err = recordJSON(t, false); err != nil {
		return nil, err
	}
	return st, nil
}

// remove deletes the row of an expired task that a read found, and its
// blobs, so that it leaves storage when it is first found expired, not at
// the next sweep. It is conditional on etag (the row as read); a failure
// leaves the row to the sweep.
func (s *Azure) remove(ctx context.Context, r *row, etag azcore.ETag) {
	ctx = context.WithoutCancel(ctx)
	_, err := s.table.DeleteEntity(ctx, r.PartitionKey, r.RowKey, &aztables.DeleteEntityOptions{IfMatch: &etag})
	if err == nil || hasStatus(err, http.StatusNotFound) {
		s.deleteBlobs(ctx, []string{r.RecordBlob, r.ResultBlob})
	}
}

func (s *Azure) downloadAll(ctx context.Context, name string) ([]byte, error) {
	dl, err := s.blobs.DownloadStream(ctx, s.container, name, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the blob %s: %w", name, err)
	}
	defer dl.Body.Close()
	var buf json.RawMessage
	if err := json.NewDecoder(dl.Body).Decode(&buf); err != nil {
		return nil, fmt.Errorf("reading the blob %s: %w", name, err)
	}
	return buf, nil
}

// Get returns the task.
func (s *Azure) Get(ctx context.Context, id string) (*Task, error) {
	st, err := s.load(ctx, id, true)
	if err != nil {
		return nil, err
	}
	return st.t, nil
}

// Update changes the task, again when another writer was first (each
// write is conditional on the row's ETag). A change that changes nothing
// writes nothing. A result kept in a blob is not read: change sees Result
// nil, and leaving it nil keeps the stored result (see [Store.Update]).
func (s *Azure) Update(ctx context.Context, id string, change func(t *Task) error) (*Task, error) {
	for range maxUpdateTries {
		old, err := s.load(ctx, id, false)
		if err != nil {
			return nil, err
		}
		t := old.t
		if err := change(t); err != nil {
			return nil, err
		}
		if bytes.Equal(t.Result, old.result) {
			rec, err := recordJSON(t, false)
			if err != nil {
				return nil, err
			}
			if bytes.Equal(rec, old.rec) {
				return t, nil // nothing changed: nothing to write
			}
		}
		r, made, err := s.encode(ctx, t, old)
		if err != nil {
			s.deleteBlobs(ctx, made)
			return nil, err
		}
		data, err := json.Marshal(r)
		if err != nil {
			s.deleteBlobs(ctx, made)
			return nil, err
		}
		etag := old.etag
		_, err = s.table.UpdateEntity(ctx, data, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
		if err == nil {
			// Blobs the row no longer names: a reader that read the old
			// row and finds them gone reads the row again.
			var gone []string
			if old.row.RecordBlob != "" && old.row.RecordBlob != r.RecordBlob {
				gone = append(gone, old.row.RecordBlob)
			}
			if old.row.ResultBlob != "" && old.row.ResultBlob != r.ResultBlob {
				gone = append(gone, old.row.ResultBlob)
			}
			s.deleteBlobs(ctx, gone)
			return t, nil
		}
		s.deleteBlobs(ctx, made)
		if hasStatus(err, http.StatusPreconditionFailed) {
			continue // another writer was first: read again
		}
		if hasStatus(err, http.StatusNotFound) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("storing task %s: %w", id, err)
	}
	return nil, fmt.Errorf("storing task %s: %d writers in a row were first", id, maxUpdateTries)
}

func (s *Azure) deleteBlobs(ctx context.Context, names []string) {
	for _, n := range names {
		s.deleteBlob(ctx, n)
	}
}

func (s *Azure) deleteBlob(ctx context.Context, name string) {
	if name != "" {
		s.results.forget(name)
		_, _ = s.blobs.DeleteBlob(context.WithoutCancel(ctx), s.container, name, nil)
	}
}

// Sweep removes the rows (and blobs) of the tasks expired before now.
func (s *Azure) Sweep(ctx context.Context, now time.Time) error {
	filter := fmt.Sprintf("PartitionKey eq '%s' and Expires lt '%s'", s.partitionK, now.UTC().Format(expiresLayout))
	pager := s.table.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	var errs []error
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if tableMissing(err) {
			return nil // the storage lost the table: nothing to remove
		}
		if err != nil {
			return fmt.Errorf("listing expired tasks: %w", err)
		}
		for _, e := range page.Entities {
			var r row
			if json.Unmarshal(e, &r) != nil {
				continue
			}
			if _, err := s.table.DeleteEntity(ctx, r.PartitionKey, r.RowKey, nil); err != nil && !hasStatus(err, http.StatusNotFound) {
				errs = append(errs, err)
				continue
			}
			s.deleteBlobs(ctx, []string{r.RecordBlob, r.ResultBlob})
		}
	}
	return errors.Join(errs...)
}
