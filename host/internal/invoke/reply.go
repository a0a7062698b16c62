package invoke

import (
	"encoding/json"
	"fmt"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// acceptReply is the Accept header of every invocation: a funcmcp worker
// may answer with the direct reply, decoded in one pass; any other worker
// answers today's custom-handler reply.
var acceptReply = metadata.MediaTypeDirectResult + ", application/json"

// Reply is a worker's answer to an invocation, in either form.
type Reply struct {
	Logs []string
	// returnValue is today's ReturnValue (direct is nil).
	returnValue json.RawMessage
	// direct is the decoded result of a direct reply to a tool call.
	direct *binding.Decoded
	// encoded is the Result of a direct reply to any other request, as the
	// worker encoded it.
	encoded json.RawMessage
}

// decodeReply decodes a 2xx reply body by its content type; encoded says
// a direct reply's Result is kept encoded.
func decodeReply(contentType string, data []byte, encoded bool) (*Reply, error) {
	if encoded && metadata.IsDirectResult(contentType) {
		res, logs, err := binding.DecodeEncodedReply(data)
		return &Reply{Logs: logs, encoded: res}, err
	}
	if metadata.IsDirectResult(contentType) {
		d, logs, err := binding.DecodeDirectReply(data)
		return &Reply{Logs: logs, direct: d}, err
	}
	var out metadata.InvocationResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("the answer is not a JSON invocation response: %w%s", err, snippet(data))
	}
	return &Reply{Logs: out.Logs, returnValue: out.ReturnValue}, nil
}

// ReturnValue is the reply's ReturnValue (nil for a direct reply).
func (r *Reply) ReturnValue() json.RawMessage { return r.returnValue }

// Encoded is the result object of a direct reply to a call of a Function
// with Encoded set, as the worker encoded it; nil for today's reply.
func (r *Reply) Encoded() json.RawMessage { return r.encoded }

// Result turns the reply into a tool result, decoding today's ReturnValue
// with useResultSchema as binding.DecodeReturnValue says.
func (r *Reply) Result(useResultSchema bool) (*binding.Decoded, error) {
	if r.direct != nil {
		return r.direct, nil
	}
	return binding.DecodeReturnValue(r.returnValue, useResultSchema)
}
