package taskrun

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/funcmcp/funcmcp/metadata"
)

// Tasks run again on another instance. A tool that declares reruns
// (metadata.TaskSupport.Reruns: it is idempotent for its arguments) has
// its call kept in the task's record ([RerunCall], kept by
// [Service.Launch]). When an instance judges the instance running such a
// task stopped (judgeStopped, on a tasks/get), it claims the task with one
// conditional write (tasks.Claim): exactly one of the instances that
// judge the same run claims it, and runs the call again from the start
// ([Service.OnRerun]), for the same owner, counting the run; the client
// reads "working" and a status message saying so. Out of runs, the task
// ends failed as one of a tool without reruns does.

// MaxRerunBytes bounds what a task's record keeps of its call for a re-run
// (the arguments and the request headers, encoded): a larger call is run
// once, as a task of a tool without reruns is, and its record stays small.
const MaxRerunBytes = 64 << 10

// RerunCall is what a task's record keeps of its call to run it again on
// another instance ([Run.KeepForRerun]).
type RerunCall struct {
	Arguments       json.RawMessage      `json:"arguments,omitempty"`
	ProtocolVersion string               `json:"protocolVersion,omitempty"`
	SessionID       string               `json:"sessionId,omitempty"`
	ClientInfo      *metadata.ClientInfo `json:"clientInfo,omitempty"`
	Capabilities    json.RawMessage      `json:"capabilities,omitempty"`
	Transport       string               `json:"transport,omitempty"`
	Headers         http.Header          `json:"headers,omitempty"`
}

// credentialHeaders are the request headers a record does not keep: the
// client's credentials (checked when the task was made) stay out of
// storage, and so do the access tokens funchost passes on (every header
// starting tokenHeaders). The identity headers funchost set from a
// verified token stay.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Functions-Key"}

const tokenHeaders = "X-Ms-Token-"

// Encode encodes the call as a record keeps it, without the client's
// credentials (rc is not changed); it fails, with the encoding all the
// same, when the call is larger than MaxRerunBytes.
func (rc RerunCall) Encode() (json.RawMessage, error) {
	rc.Headers = rc.Headers.Clone()
	for _, k := range credentialHeaders {
		rc.Headers.Del(k)
	}
	for k := range rc.Headers {
		if len(k) >= len(tokenHeaders) && strings.EqualFold(k[:len(tokenHeaders)], tokenHeaders) {
			delete(rc.Headers, k)
		}
	}
	data, err := json.Marshal(rc)
	if err == nil && len(data) > MaxRerunBytes {
		err = fmt.Errorf("keeping a task's call: %d bytes, over %d", len(data), MaxRerunBytes)
	}
	return data, err
}

// DecodeRerun reads the call a task's record keeps, and its arguments.
func DecodeRerun(data json.RawMessage) (rc RerunCall, args map[string]json.RawMessage, err error) {
	err = json.Unmarshal(data, &rc)
	if err == nil && len(rc.Arguments) > 0 {
		err = json.Unmarshal(rc.Arguments, &args)
	}
	if err != nil {
		return RerunCall{}, nil, fmt.Errorf("reading a task's kept call: %w", err)
	}
	return rc, args, nil
}
