package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/funcmcp/funcmcp/host/internal/ids"
)

// The table of used request states carries an epoch: a row holding a
// random id, inserted once when the table has none (it is new, or the
// storage lost it). A state records the epoch it was given in, and opens
// only while that epoch is the table's: a table that lost its rows lost
// its epoch with them, so that a state used before the loss is refused
// instead of opening again.

// ErrStateEpochChanged is the error of [AzureStates.Spend] for a state
// given in an epoch that is no longer the table's.
var ErrStateEpochChanged = errors.New("the record of used request states was reset since the state was given")

// The row of the epoch. Its partition key is longer than the two
// characters of a state's, so that it is never a state's row, and it has
// no Expires, so that Sweep leaves it.
const (
	epochPartition = "epoch"
	epochRow       = "epoch"
)

// epochRowData is the row of the table's epoch.
type epochRowData struct {
	PartitionKey string
	RowKey       string
	Epoch        string
}

// Epoch returns the table's epoch, inserting one when it has none: of
// instances inserting at once, one wins and the others read its epoch.
func (s *AzureStates) Epoch(ctx context.Context) (string, error) {
	e, err := s.readEpoch(ctx)
	if err != nil || e != "" {
		return e, err
	}
	data, err := json.Marshal(epochRowData{PartitionKey: epochPartition, RowKey: epochRow, Epoch: ids.Random(ids.LowerAlnum, 16)})
	if err != nil {
		return "", fmt.Errorf("making the epoch of the used request states: %w", err)
	}
	_, err = s.table.AddEntity(ctx, data, nil)
	if tableMissing(err) {
		if err = s.createTable(ctx); err == nil {
			_, err = s.table.AddEntity(ctx, data, nil)
		}
	}
	if err != nil && !hasStatus(err, http.StatusConflict) {
		return "", fmt.Errorf("making the epoch of the used request states: %w", err)
	}
	// Read what was inserted, by this instance or the one that won.
	if e, err = s.readEpoch(ctx); err == nil && e == "" {
		err = errors.New("the epoch of the used request states is missing once inserted")
	}
	return e, err
}

// readEpoch returns the table's epoch, "" when it has none.
func (s *AzureStates) readEpoch(ctx context.Context) (string, error) {
	resp, err := s.table.GetEntity(ctx, epochPartition, epochRow, nil)
	if tableMissing(err) || hasStatus(err, http.StatusNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the epoch of the used request states: %w", err)
	}
	var row epochRowData
	if err := json.Unmarshal(resp.Value, &row); err != nil {
		return "", fmt.Errorf("reading the epoch of the used request states: %w", err)
	}
	return row.Epoch, nil
}

// checkEpoch fails with ErrStateEpochChanged when the table's epoch is
// not epoch. Spend calls it after the state's row is inserted: an epoch
// still there then was there when the row went in, so that the table had
// not lost its rows since the state was given, the row of its first use
// included.
func (s *AzureStates) checkEpoch(ctx context.Context, epoch string) error {
	e, err := s.readEpoch(ctx)
	switch {
	case err != nil:
		return err
	case e == "" || e != epoch:
		return ErrStateEpochChanged
	}
	return nil
}
