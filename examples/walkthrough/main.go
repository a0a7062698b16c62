// Command walkthrough is the app docs/walkthrough.md builds from a
// scaffold of funchost new: a shared to-do list whose tools are typed,
// scoped, traced and announce their changes. Copied over the scaffold's
// main.go and main_test.go, it builds in that app's module as here.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"go.opentelemetry.io/otel"

	"github.com/funcmcp/funcmcp/worker"
	workerotel "github.com/funcmcp/funcmcp/worker/otel"
)

// listURI is the resource that holds the list; add_todo and clear_todos
// announce each change of it.
const listURI = "todo://list"

// adminScope is the scope clear_todos requires of the caller's token.
const adminScope = "Todo.Admin"

// AddTodoInput is add_todo's arguments: its input schema.
//
//docs:begin types
type AddTodoInput struct {
	Text string `json:"text" jsonschema:"What there is to do."`
}

// Added is add_todo's structured result: its output schema.
type Added struct {
	ID   int    `json:"id" jsonschema:"The new item's number, from 1."`
	Text string `json:"text"`
	Open int    `json:"open" jsonschema:"How many items the list holds now."`
}

//docs:end types

// ClearInput is clear_todos' arguments (none).
type ClearInput struct{}

// Cleared is clear_todos' structured result.
type Cleared struct {
	Cleared int    `json:"cleared" jsonschema:"How many items were removed."`
	By      string `json:"by" jsonschema:"The subject of the caller's token."`
}

// Todo is one item of the list.
type Todo struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
}

// list is the to-do list of this process (each instance of the app holds
// its own; a real app keeps it in storage).
type list struct {
	mu    sync.Mutex
	next  int
	items []Todo
}

// add appends an item and returns it with the number of items.
func (l *list) add(text string) Added {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	l.items = append(l.items, Todo{ID: l.next, Text: text})
	return Added{ID: l.next, Text: text, Open: len(l.items)}
}

// clear empties the list and returns how many items it held.
func (l *list) clear() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.items)
	l.items = nil
	return n
}

// json is the list as the todo://list resource reads.
func (l *list) json() (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	data, err := json.Marshal(append([]Todo{}, l.items...))
	return string(data), err
}

func main() {
	newApp(&list{}).Main()
}

// newApp configures the tools and the resource of the app on todos.
func newApp(todos *list) *worker.App {
	//docs:begin telemetry
	// worker/otel exports the worker's spans when funchost turns telemetry on.
	app := worker.New(&worker.Options{Telemetry: workerotel.New()})
	//docs:end telemetry

	//docs:begin tool
	worker.AddTool(app, "add_todo", func(ctx context.Context, tc *worker.ToolContext, in AddTodoInput) (*worker.Result, Added, error) {
		// The tool's own span, a child of the call's span in the same trace.
		_, span := otel.Tracer("todo").Start(ctx, "store todo")
		added := todos.add(in.Text)
		span.End()
		announce(ctx, tc)
		return nil, added, nil
	}).
		WithTitle("Add a to-do").
		WithDescription("Add an item to the shared to-do list.")
	//docs:end tool

	//docs:begin scoped
	worker.AddTool(app, "clear_todos", func(ctx context.Context, tc *worker.ToolContext, _ ClearInput) (*worker.Result, Cleared, error) {
		caller, err := tc.Caller() // who called, from the validated token
		if err != nil {
			return nil, Cleared{}, err
		}
		n := todos.clear()
		announce(ctx, tc)
		return nil, Cleared{Cleared: n, By: caller.Subject}, nil
	}).
		WithDescription("Remove every item of the list.").
		WithRequiredScopes(adminScope)
	//docs:end scoped

	app.ConfigureMcpResource(listURI).
		WithName("todo-list").
		WithTitle("To-do list").
		WithDescription("The items of the list; subscribe to hear when it changes.").
		WithMimeType("application/json").
		Handle(func(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) {
			data, err := todos.json()
			if err != nil {
				return nil, err
			}
			return worker.TextResource(data), nil
		})
	return app
}

// announce tells the clients that listen to todo://list that it changed.
//
//docs:begin announce
func announce(ctx context.Context, tc *worker.ToolContext) {
	err := worker.NotifyResourceUpdated(ctx, listURI)
	if err != nil && !errors.Is(err, worker.ErrNotSupported) { // ErrNotSupported: the Azure Functions host
		tc.Logf("the list changed, but the change was not announced: %v", err)
	}
}

//docs:end announce
