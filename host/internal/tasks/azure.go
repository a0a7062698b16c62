package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
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
	table      *aztables.Client
	blobs      *azblob.Client
	container  string
	now        func() time.Time
	partitionK string
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
	if connectionString != "" {
		svc, err = aztables.NewServiceClientFromConnectionString(connectionString, nil)
	} else {
		svc, err = aztables.NewServiceClient(opts.TableURL, opts.Credential, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the task table: %w", err)
	}
	if connectionString != "" {
		blobs, err = azblob.NewClientFromConnectionString(connectionString, nil)
	} else {
		blobs, err = azblob.NewClient(opts.BlobURL, opts.Credential, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the task blobs: %w", err)
	}
	s := &Azure{table: svc.NewClient(opts.Table), blobs: blobs, container: opts.Container, now: opts.Now, partitionK: "task"}
	if _, err := svc.CreateTable(ctx, opts.Table, nil); err != nil && !hasCode(err, string(aztables.TableAlreadyExists)) {
		return nil, fmt.Errorf("creating the task table %s: %w", opts.Table, err)
	}
	if _, err := blobs.CreateContainer(ctx, opts.Container, nil); err != nil && !hasCode(err, "ContainerAlreadyExists") {
		return nil, fmt.Errorf("creating the task container %s: %w", opts.Container, err)
	}
	return s, nil
}

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
	// holds it otherwise.
	Record     string `json:",omitempty"`
	RecordBlob string `json:",omitempty"`
}

const expiresLayout = "2006-01-02T15:04:05.000Z"

// record is a task as stored.
type record struct {
	ID              string                     `json:"id"`
	Scope           string                     `json:"scope"`
	Tool            string                     `json:"tool,omitempty"`
	Function        string                     `json:"function,omitempty"`
	Instance        string                     `json:"instance,omitempty"`
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
}

func toRecord(t *Task) *record {
	return &record{ID: t.ID, Scope: t.Scope, Tool: t.Tool, Function: t.Function, Instance: t.Instance, Status: t.Status,
		StatusMessage: t.StatusMessage, Created: t.Created, Updated: t.Updated, Heartbeat: t.Heartbeat, TTLMs: t.TTL.Milliseconds(),
		PollMs: t.PollInterval.Milliseconds(), InputRequests: t.InputRequests, InputResponses: t.InputResponses,
		Result: t.Result, Error: t.Error, CancelRequested: t.CancelRequested}
}

func (r *record) task() *Task {
	return &Task{ID: r.ID, Scope: r.Scope, Tool: r.Tool, Function: r.Function, Instance: r.Instance, Status: r.Status,
		StatusMessage: r.StatusMessage, Created: r.Created, Updated: r.Updated, Heartbeat: r.Heartbeat, TTL: time.Duration(r.TTLMs) * time.Millisecond,
		PollInterval: time.Duration(r.PollMs) * time.Millisecond, InputRequests: r.InputRequests,
		InputResponses: r.InputResponses, Result: r.Result, Error: r.Error, CancelRequested: r.CancelRequested}
}

// encode makes the row of t, uploading its record to a new blob when it is
// large; the blob's name is returned so that a failed write can remove it.
func (s *Azure) encode(ctx context.Context, t *Task) (*row, string, error) {
	data, err := json.Marshal(toRecord(t))
	if err != nil {
		return nil, "", fmt.Errorf("encoding task %s: %w", t.ID, err)
	}
	r := &row{PartitionKey: s.partitionK, RowKey: t.ID, Expires: t.Expires().UTC().Format(expiresLayout)}
	if len(data) <= maxInlineRecord {
		r.Record = string(data)
		return r, "", nil
	}
	name := t.ID + "/" + ids.Random(ids.Base32Lower, 12)
	if _, err := s.blobs.UploadBuffer(ctx, s.container, name, data, nil); err != nil {
		return nil, "", fmt.Errorf("storing task %s: %w", t.ID, err)
	}
	r.RecordBlob = name
	return r, name, nil
}

// Create stores t; the table write is acknowledged before it returns.
func (s *Azure) Create(ctx context.Context, t *Task) error {
	r, blob, err := s.encode(ctx, t)
	if err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := s.table.AddEntity(ctx, data, nil); err != nil {
		s.deleteBlob(ctx, blob)
		return fmt.Errorf("storing task %s: %w", t.ID, err)
	}
	return nil
}

// load reads a task's row and record.
func (s *Azure) load(ctx context.Context, id string) (*Task, *row, azcore.ETag, error) {
	resp, err := s.table.GetEntity(ctx, s.partitionK, id, nil)
	if err != nil {
		if hasStatus(err, http.StatusNotFound) {
			return nil, nil, "", ErrNotFound
		}
		return nil, nil, "", fmt.Errorf("reading task %s: %w", id, err)
	}
	var r row
	if err := json.Unmarshal(resp.Value, &r); err != nil {
		return nil, nil, "", fmt.Errorf("reading task %s: %w", id, err)
	}
	data := []byte(r.Record)
	if r.RecordBlob != "" {
		if data, err = s.downloadAll(ctx, r.RecordBlob); err != nil {
			return nil, nil, "", fmt.Errorf("reading task %s: %w", id, err)
		}
	}
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, nil, "", fmt.Errorf("reading task %s: %w", id, err)
	}
	t := rec.task()
	if !s.now().Before(t.Expires()) {
		return nil, nil, "", ErrNotFound
	}
	return t, &r, resp.ETag, nil
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
	t, _, _, err := s.load(ctx, id)
	return t, err
}

// Update changes the task, again when another writer was first.
func (s *Azure) Update(ctx context.Context, id string, change func(t *Task) error) (*Task, error) {
	for range maxUpdateTries {
		t, old, etag, err := s.load(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := change(t); err != nil {
			return nil, err
		}
		r, blob, err := s.encode(ctx, t)
		if err != nil {
			return nil, err
		}
		data, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		_, err = s.table.UpdateEntity(ctx, data, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
		if err == nil {
			if old.RecordBlob != "" && old.RecordBlob != blob {
				s.deleteBlob(ctx, old.RecordBlob)
			}
			return t, nil
		}
		s.deleteBlob(ctx, blob)
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

func (s *Azure) deleteBlob(ctx context.Context, name string) {
	if name != "" {
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
			s.deleteBlob(ctx, r.RecordBlob)
		}
	}
	return errors.Join(errs...)
}
