package worker

import (
	"context"
	"slices"

	"github.com/funcmcp/funcmcp/metadata"
)

// CompletionHandler computes the completion values of one prompt argument
// or template variable from what the user has typed (cc.Value). At most 100
// values are sent (the MCP limit), with the total; the values are sent as
// returned, not filtered.
type CompletionHandler func(ctx context.Context, cc *CompletionContext) ([]string, error)

// CompletionContext is one completion/complete request.
type CompletionContext struct {
	// Prompt is the prompt being completed ("" for a resource template).
	Prompt string
	// URITemplate is the resource template being completed ("" for a
	// prompt).
	URITemplate string
	// Argument is the argument or template variable being completed, and
	// Value what the user has typed so far.
	Argument string
	Value    string
	// Arguments are the other arguments (variables) already given.
	Arguments map[string]string
	// SessionID is the MCP session id ("" when none).
	SessionID string
	// ClientInfo is the MCP client's implementation info (nil when unknown).
	ClientInfo *metadata.ClientInfo
	// Transport says how the request reached the host (nil when unknown).
	Transport *metadata.Transport
	// FunctionName is the function (folder) name the host asked.
	FunctionName string

	logBook
}

// completionSet is the completions of one prompt or resource template, in
// declaration order; a later declaration for the same name replaces an
// earlier one in place.
type completionSet struct {
	names   []string
	values  map[string][]string
	handler map[string]CompletionHandler
}

func (s *completionSet) add(name string) {
	if !slices.Contains(s.names, name) {
		s.names = append(s.names, name)
	}
	if s.values == nil {
		s.values, s.handler = map[string][]string{}, map[string]CompletionHandler{}
	}
	delete(s.values, name)
	delete(s.handler, name)
}

func (s *completionSet) fixed(name string, values []string) {
	s.add(name)
	s.values[name] = slices.Clone(values)
	if s.values[name] == nil {
		s.values[name] = []string{}
	}
}

func (s *completionSet) dynamic(errs []error, name string, f CompletionHandler) []error {
	if f == nil {
		return append(errs, ruleErr(ErrNoCompletionFunc, "completion of %q: %v", name, ErrNoCompletionFunc))
	}
	s.add(name)
	s.handler[name] = f
	return errs
}

// sources returns the declarations as function.json writes them.
func (s *completionSet) sources() []metadata.CompletionSource {
	out := make([]metadata.CompletionSource, 0, len(s.names))
	for _, n := range s.names {
		if f := s.handler[n]; f != nil {
			out = append(out, metadata.CompletionSource{Name: n, Dynamic: true})
		} else {
			out = append(out, metadata.CompletionSource{Name: n, Values: s.values[n]})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// handlers returns a copy of the completion functions by name.
func (s *completionSet) handlers() map[string]CompletionHandler {
	out := make(map[string]CompletionHandler, len(s.handler))
	for k, v := range s.handler {
		out[k] = v
	}
	return out
}
