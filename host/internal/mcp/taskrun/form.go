package taskrun

import (
	"bytes"
	"strconv"

	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// appendString writes s as a JSON string.
func appendString(b *bytes.Buffer, s string) {
	b.Write(metadata.AppendJSONString(b.AvailableBuffer(), s))
}

// TimeFormat is the form of the times of a task: RFC 3339 in UTC, to the
// millisecond.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// AppendHead writes the members every task result shares, after '{':
// resultType, taskId, status, statusMessage, createdAt, lastUpdatedAt,
// ttlMs, pollIntervalMs.
func AppendHead(b *bytes.Buffer, resultType string, t *tasks.Task) {
	b.WriteString(`"resultType":`)
	appendString(b, resultType)
	b.WriteByte(',')
	AppendFields(b, t)
}

// AppendFields writes the members of a task after '{' or ',': taskId,
// status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs.
func AppendFields(b *bytes.Buffer, t *tasks.Task) {
	b.WriteString(`"taskId":`)
	appendString(b, t.ID)
	b.WriteString(`,"status":`)
	appendString(b, string(t.Status))
	if t.StatusMessage != "" {
		b.WriteString(`,"statusMessage":`)
		appendString(b, t.StatusMessage)
	}
	b.WriteString(`,"createdAt":"`)
	b.WriteString(t.Created.UTC().Format(TimeFormat))
	b.WriteString(`","lastUpdatedAt":"`)
	b.WriteString(t.Updated.UTC().Format(TimeFormat))
	b.WriteString(`","ttlMs":`)
	b.WriteString(strconv.FormatInt(t.TTL.Milliseconds(), 10))
	b.WriteString(`,"pollIntervalMs":`)
	b.WriteString(strconv.FormatInt(max(t.PollInterval.Milliseconds(), 1), 10))
}
