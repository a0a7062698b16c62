package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// DefaultStateTable is the Azure Storage table of [AzureStates].
const DefaultStateTable = "funcmcpstates"

// AzureStates records the MCP request states (the sealed state of an
// input-required round) that opened, in an Azure Storage table every
// instance of the app shares, so that each opens once across them: the
// first instance to insert a state's row spends it, and the insert of
// every other one fails (a conditional insert: no read, no race). Each row
// lives until the state expires; [AzureStates.Sweep] removes the rows of
// the states expired.
type AzureStates struct {
	svc       *aztables.ServiceClient
	tableName string
	table     *aztables.Client
}

// NewAzureStates returns the table of used request states of the storage
// account a connection string names (or, when it is "", the table
// endpoint and credential of o). It contacts nothing: the table is
// created when a state is first recorded and it is missing. o.Table names
// the table (default DefaultStateTable); the other options but Transport
// are not used.
func NewAzureStates(connectionString string, o *AzureOptions) (*AzureStates, error) {
	var opts AzureOptions
	if o != nil {
		opts = *o
	}
	if opts.Table == "" {
		opts.Table = DefaultStateTable
	}
	to := &aztables.ClientOptions{ClientOptions: clientOptions(opts.Transport, 10*time.Second)}
	var (
		svc *aztables.ServiceClient
		err error
	)
	if connectionString != "" {
		svc, err = aztables.NewServiceClientFromConnectionString(connectionString, to)
	} else {
		svc, err = aztables.NewServiceClient(opts.TableURL, opts.Credential, to)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the table of used request states: %w", err)
	}
	return &AzureStates{svc: svc, tableName: opts.Table, table: svc.NewClient(opts.Table)}, nil
}

func (s *AzureStates) createTable(ctx context.Context) error {
	if _, err := s.svc.CreateTable(ctx, s.tableName, nil); err != nil && !hasCode(err, string(aztables.TableAlreadyExists)) {
		return fmt.Errorf("creating the table of used request states %s: %w", s.tableName, err)
	}
	return nil
}

// stateRow is the row of a state that opened: its key, in a partition of
// its first two characters (the keys are random, so rows spread evenly),
// and when it expires.
type stateRow struct {
	PartitionKey string
	RowKey       string
	Expires      string
}

// ErrStateKey is a request state key that is not of letters and digits.
var ErrStateKey = errors.New("a request state key is 2 to 128 letters and digits")

// Spend records the state named key, which expires at expires and was
// given in epoch, and reports whether this was its first record (false: it
// opened before, on this or another instance sharing the table). A key is
// 2 to 128 letters and digits. A state of an epoch that is no longer the
// table's fails with ErrStateEpochChanged (see [AzureStates.Epoch]).
func (s *AzureStates) Spend(ctx context.Context, key, epoch string, expires time.Time) (bool, error) {
	if !validStateKey(key) {
		return false, ErrStateKey
	}
	if epoch == "" {
		return false, ErrStateEpochChanged // given where no record was shared
	}
	data, err := json.Marshal(stateRow{PartitionKey: key[:2], RowKey: key, Expires: expires.UTC().Format(expiresLayout)})
	if err != nil {
		return false, fmt.Errorf("recording a used request state: %w", err)
	}
	_, err = s.table.AddEntity(ctx, data, nil)
	if tableMissing(err) {
		if err = s.createTable(ctx); err == nil {
			_, err = s.table.AddEntity(ctx, data, nil)
		}
	}
	switch {
	case err == nil:
		if err = s.checkEpoch(ctx, epoch); err != nil {
			return false, err
		}
		return true, nil
	case hasStatus(err, http.StatusConflict):
		return false, nil // the row is there: spent before
	}
	return false, fmt.Errorf("recording a used request state: %w", err)
}

func validStateKey(key string) bool {
	if len(key) < 2 || len(key) > 128 {
		return false
	}
	for i := range len(key) {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// Sweep removes the rows of the states expired before now (they no longer
// open anyway).
func (s *AzureStates) Sweep(ctx context.Context, now time.Time) error {
	filter := fmt.Sprintf("Expires lt '%s'", now.UTC().Format(expiresLayout))
	sel := "PartitionKey,RowKey"
	pager := s.table.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter, Select: &sel})
	var errs []error
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if tableMissing(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing expired request states: %w", err)
		}
		for _, e := range page.Entities {
			var r stateRow
			if json.Unmarshal(e, &r) != nil {
				continue
			}
			if _, err := s.table.DeleteEntity(ctx, r.PartitionKey, r.RowKey, nil); err != nil && !hasStatus(err, http.StatusNotFound) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
