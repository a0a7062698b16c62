package worker

import (
	"slices"
	"time"

	"github.com/funcmcp/funcmcp/metadata"
)

// Icon is an icon of a tool, resource or prompt: Src (an https: or data:
// URI) with an optional MimeType, Sizes ("48x48", "any") and Theme
// ("light" or "dark").
type Icon = metadata.Icon

// ToolAnnotations are hints about a tool's behaviour: Title,
// ReadOnlyHint, DestructiveHint, IdempotentHint and OpenWorldHint (nil
// hints are not advertised; new(true) makes one).
type ToolAnnotations = metadata.ToolAnnotations

// WithAnnotations sets the tool's annotations, advertised in tools/list by
// funchost. They travel in a funcmcp key: the Azure Functions MCP extension
// (1.6) does not advertise tool annotations. The last call wins.
func (b *ToolBuilder) WithAnnotations(a ToolAnnotations) *ToolBuilder {
	b.annotations = &a
	return b
}

// WithIcons sets the tool's icons, advertised in tools/list by funchost
// (a funcmcp key on tools: the Azure Functions MCP extension does not
// advertise them). The last call wins.
func (b *ToolBuilder) WithIcons(icons ...Icon) *ToolBuilder {
	b.icons = slices.Clone(icons)
	return b
}

// Task support of a tool (see [ToolBuilder.WithTaskSupport]).
const (
	TaskOptional = metadata.TaskOptional
	TaskRequired = metadata.TaskRequired
)

// TaskOptions are the suggestions a task-supporting tool makes to clients;
// zero fields take the host's defaults.
type TaskOptions struct {
	// TTL is how long a task stays readable after it was created.
	TTL time.Duration
	// PollInterval is how often a client should poll tasks/get.
	PollInterval time.Duration
	// Deferred starts each call synchronously, as for a client without
	// tasks, and makes it a task only when the handler calls
	// [ToolContext.RunAsTask]: a tool can first ask the client what it
	// needs (on MCP 2026-07-28 the input-required way) and then go on as a
	// task. Without it the call is a task before the handler runs.
	Deferred bool
	// Reruns is how many times funchost may run the task again, from the
	// start with the same arguments and for the same client, on another
	// instance when the instance running it stops answering (killed,
	// scaled in): up to Reruns+1 runs in all, at most
	// metadata.MaxTaskReruns+1. Declare it only when running the handler
	// twice with the same arguments is safe and gives the same result; 0
	// (the default) ends such a task failed. Not with Deferred.
	Reruns int
}

// WithTaskSupport lets the tool run as an MCP task (the tasks extension,
// SEP-2663), for a long job that outlives a request: with TaskOptional a
// client that negotiated the extension gets a task it polls, others a
// synchronous call; with TaskRequired the others are refused. The handler
// stays the same: its progress becomes the task's status message, its
// requests to the client (Elicit, CreateMessage, ListRoots) the task's
// input requests. funchost runs tasks; the Azure Functions host ignores the
// declaration (a funcmcp key) and runs the tool synchronously.
func (b *ToolBuilder) WithTaskSupport(support string, opts *TaskOptions) *ToolBuilder {
	ts := &metadata.TaskSupport{Support: support}
	if opts != nil {
		ts.TTLMs, ts.PollIntervalMs = opts.TTL.Milliseconds(), opts.PollInterval.Milliseconds()
		ts.Deferred, ts.Reruns = opts.Deferred, opts.Reruns
	}
	if err := ts.Check(); err != nil {
		b.errs = append(b.errs, ruleErr(ErrOutputSetting, "%v", err))
		return b
	}
	b.task = ts
	return b
}

// applyExtras adds the annotations, icons and MCP App metadata to a
// tool's options. The app's "ui" entry replaces a "ui" set with
// WithMetadata, as the .NET worker's fluent MCP App configuration does.
func (b *ToolBuilder) applyExtras(opts *metadata.ToolOptions) {
	opts.Annotations = b.annotations
	opts.Task = b.task
	opts.RequiredScopes = slices.Clone(b.scopes)
	opts.Icons = slices.Clone(b.icons)
	if b.mcpApp != nil {
		opts.Metadata = metadata.SetField(opts.Metadata, metadata.MetaKeyUI, b.mcpApp.toolUI(b.name))
	}
}
