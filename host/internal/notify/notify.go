// Package notify carries the changes an MCP client may listen for: a
// resource that changed, a list (tools, prompts, resources) that changed,
// a task whose state or status message changed. Changes come from the
// worker (any function of the app may announce one), from funchost itself
// and from the task store; they reach every listener on this instance and,
// through a [Relay], the listeners on every other instance.
//
// This file is the contract between the three sides: the [Change] and its
// wire form (what a [Relay] carries between instances, at most [MaxWire]
// bytes), the [Publisher] that takes a change from anywhere on this
// instance, and the [Relay] a backplane offers.
//
// The [Hub] (hub.go) keeps the listeners of this instance: [Hub.Listen]
// registers one, [Hub.Publish] (or [Hub.PublishTracked], which reports
// what the relay did with it) queues a change on each listener that asked
// for it and hands its wire form to the relay, never waiting for either,
// and [Hub.Receive] delivers another instance's change here only. What the
// hub keeps is bounded ([Limits]): counted listeners per owner, per client
// address ([Limits.ListenersPerAddress]; every owner nests within its
// address) and in all; byte budgets ([Limits.Bytes], an owner.BudgetLimit)
// per owner, per address and in all, charging each listener
// [ListenerCost], what its stream holds and each URI or task id it follows
// ([SubscriptionCost] besides its bytes); the URIs and task ids one
// listener follows, in number and bytes; and its queue, in changes and
// bytes. A resource or list change equal to one still queued for a
// listener is merged into it and takes no place, so a flood of one change
// takes one place; a listener whose queue would pass its bound is ended
// ([ErrTooSlow]). [LimitsFromSettings] (settings.go) reads the limits the
// app settings ask for.
package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Kind is what changed.
type Kind string

// The kinds of change. The values are their wire names.
const (
	ResourceUpdated      Kind = "resourceUpdated"      // URI is the resource
	ToolsListChanged     Kind = "toolsListChanged"     // the tools list
	PromptsListChanged   Kind = "promptsListChanged"   // the prompts list
	ResourcesListChanged Kind = "resourcesListChanged" // the resources list
	TaskStatus           Kind = "taskStatus"           // TaskID, Owner and Task are set
)

// MaxURI bounds a resource URI in a change, as resources/read bounds it.
const MaxURI = 4096

// MaxWire bounds the wire form of one change (a task's status message and
// its metadata included; a task's result never travels in a change).
const MaxWire = 64 << 10

// Change is one thing that changed.
type Change struct {
	Kind Kind `json:"kind"`
	// URI is the resource that changed (ResourceUpdated).
	URI string `json:"uri,omitempty"`
	// TaskID is the task that changed (TaskStatus).
	TaskID string `json:"taskId,omitempty"`
	// Owner is who the task belongs to, as tasks/get checks it (the
	// task's scope: its verified owner, else the one scope of
	// unauthenticated clients; see mcp's taskScope): only listeners of the same owner may hear about it
	// (TaskStatus).
	Owner string `json:"owner,omitempty"`
	// Task is the task object as tasks/get answers it (TaskStatus).
	Task json.RawMessage `json:"task,omitempty"`
}

// ErrBadChange: a change that breaks the rules of its kind.
var ErrBadChange = errors.New("bad change")

// Check reports whether c is whole: a known kind with what it needs.
func (c Change) Check() error {
	switch c.Kind {
	case ResourceUpdated:
		if c.URI == "" || len(c.URI) > MaxURI {
			return fmt.Errorf("%w: %s needs a uri of 1 to %d bytes", ErrBadChange, c.Kind, MaxURI)
		}
	case ToolsListChanged, PromptsListChanged, ResourcesListChanged:
	case TaskStatus:
		if c.TaskID == "" || c.Owner == "" || len(c.Task) == 0 {
			return fmt.Errorf("%w: %s needs a task id, an owner and the task", ErrBadChange, c.Kind)
		}
	default:
		return fmt.Errorf("%w: unknown kind %q", ErrBadChange, c.Kind)
	}
	return nil
}

// Encode gives the wire form of c, the bytes a [Relay] carries.
func Encode(c Change) ([]byte, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding a change: %w", err)
	}
	if len(b) > MaxWire {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrBadChange, len(b), MaxWire)
	}
	return b, nil
}

// Decode reads the wire form of a change and checks it.
func Decode(b []byte) (Change, error) {
	var c Change
	if len(b) > MaxWire {
		return c, fmt.Errorf("%w: %d bytes, more than %d", ErrBadChange, len(b), MaxWire)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return Change{}, fmt.Errorf("%w: %v", ErrBadChange, err)
	}
	return c, c.Check()
}

// Publisher takes a change announced on this instance: it reaches the
// listeners here and, when a Relay is set, every other instance.
type Publisher interface {
	Publish(c Change)
}

// Relay carries changes to the other instances of a deployment; a
// backplane offers one. Broadcast sends the wire form of a change (see
// [Encode]) to every other live instance, at most once each, and returns
// once the backplane has taken it (not once it was delivered). What the
// other instances receive they hand to their hub's Receive.
type Relay interface {
	Broadcast(ctx context.Context, wire []byte) error
}
