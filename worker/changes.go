package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// Errors of announced changes (match with errors.Is); a host that offers no
// channel for them gives an error matching [ErrNotSupported].
var (
	// ErrBadChange: the change is not one a function may announce (a URI
	// that is not an absolute URI, a template, longer than 4096 bytes; a
	// list that is not tools, prompts or resources), or the host refused
	// it as such (400).
	ErrBadChange = errors.New("not a change a function may announce")
	// ErrTooManyChanges: the host refused the change for its rate (429);
	// the change was dropped. funchost never refuses one so: past its rate
	// a change waits its turn, merged with one of the same resource.
	ErrTooManyChanges = errors.New("more changes announced than the host takes per second")
)

// ChangeError is a change the host refused: its HTTP status and what it
// said. It matches [ErrBadChange] (400) and [ErrTooManyChanges] (429) with
// errors.Is.
type ChangeError struct {
	Status  int
	Message string
	// RetryAfter is when the host takes changes again (429), 0 when it
	// did not say.
	RetryAfter time.Duration
}

func (e *ChangeError) Error() string {
	return fmt.Sprintf("the host refused the change (%d %s): %s", e.Status, http.StatusText(e.Status), e.Message)
}

// Is matches ErrBadChange and ErrTooManyChanges by the status.
func (e *ChangeError) Is(target error) bool {
	switch target {
	case ErrBadChange:
		return e.Status == http.StatusBadRequest
	case ErrTooManyChanges:
		return e.Status == http.StatusTooManyRequests
	}
	return false
}

// List is one of the lists of the app's MCP functions a client may list.
type List string

// The lists whose changes a function may announce.
const (
	ToolsList     List = "tools"
	PromptsList   List = "prompts"
	ResourcesList List = "resources" // resources and resource templates
)

// listKinds are the kinds of change of each list.
var listKinds = map[List]string{
	ToolsList:     metadata.ChangeToolsListChanged,
	PromptsList:   metadata.ChangePromptsListChanged,
	ResourcesList: metadata.ChangeResourcesListChanged,
}

// CanNotifyChanges reports whether the host offers the channel that
// [NotifyResourceUpdated] and [NotifyListChanged] use: true under funchost,
// false under the real Azure Functions host, which has none.
func CanNotifyChanges() bool {
	_, _, ok := changeChannel()
	return ok
}

// NotifyResourceUpdated announces that the resource at uri changed: the
// MCP clients that subscribed to it hear about it (on MCP 2026-07-28, the
// listeners of subscriptions/listen that named it in resourceSubscriptions;
// on earlier revisions, the sessions that sent resources/subscribe for it,
// as notifications/resources/updated), on every instance that shares the
// backplane; they read the resource again to see what changed.
//
// Any code of the app may call it, inside an invocation (a tool that
// changed the resource) or outside one (a timer goroutine, another
// function of the custom handler): ctx bounds only the announcement. It
// returns once the host took the change, which takes a loopback round
// trip, and under funchost up to 2 s more while its backplane takes the
// change for the other instances (at most 5 seconds in all). The host
// takes it whether or not anyone listens; [AnnounceResourceUpdated] says
// how far it got.
//
// uri is a concrete resource URI (a URI a template matches, not the
// template), at most 4096 bytes. Under a host that offers no channel (the
// real Azure Functions host) it returns an error matching
// [ErrNotSupported] at once; other errors match [ErrBadChange] or
// [ErrTooManyChanges], or are a [*ChangeError].
func NotifyResourceUpdated(ctx context.Context, uri string) error {
	_, err := AnnounceResourceUpdated(ctx, uri)
	return err
}

// AnnounceResourceUpdated is [NotifyResourceUpdated] that also returns
// what the host had done with the change when it answered (see
// [Announcement]): a tool that tells its caller the change was announced
// says no more than that.
func AnnounceResourceUpdated(ctx context.Context, uri string) (Announcement, error) {
	if err := checkChangedURI(uri); err != nil {
		return Announcement{}, fmt.Errorf("announcing that %s changed: %w", quoteURI(uri), err)
	}
	a, err := announce(ctx, metadata.Change{Kind: metadata.ChangeResourceUpdated, URI: uri})
	if err != nil {
		return Announcement{}, fmt.Errorf("announcing that %s changed: %w", quoteURI(uri), err)
	}
	return a, nil
}

// NotifyListChanged announces that a list of the app's MCP functions
// changed (a tool, prompt or resource added, removed or changed): MCP
// clients that listen for it (on MCP 2026-07-28, a subscriptions/listen
// stream that asked for toolsListChanged, promptsListChanged or
// resourcesListChanged; on earlier revisions, every session's stream) get
// notifications/tools/list_changed, notifications/prompts/list_changed or
// notifications/resources/list_changed, and list again. It is what an app
// whose lists depend on something outside function.json (data it reads, a
// feature switched on) calls when that changes. Errors are those of
// [NotifyResourceUpdated].
func NotifyListChanged(ctx context.Context, list List) error {
	_, err := AnnounceListChanged(ctx, list)
	return err
}

// AnnounceListChanged is [NotifyListChanged] that also returns what the
// host had done with the change when it answered (see [Announcement]).
func AnnounceListChanged(ctx context.Context, list List) (Announcement, error) {
	kind, ok := listKinds[list]
	if !ok {
		return Announcement{}, fmt.Errorf("announcing that a list changed: %w: %q is not tools, prompts or resources", ErrBadChange, string(list))
	}
	a, err := announce(ctx, metadata.Change{Kind: kind})
	if err != nil {
		return Announcement{}, fmt.Errorf("announcing that the %s list changed: %w", list, err)
	}
	return a, nil
}

// Delivery is what had become of an announced change when the host
// answered; see [Announcement].
type Delivery string

// The deliveries funchost reports.
const (
	// DeliverySent: funchost handed the change to the listeners of its
	// instance, and its backplane took it for every other live instance:
	// a message in each one's queue (azurequeues), a PUBLISH the Redis
	// server answered (redis), or handed over in the process (memory, and
	// a single funchost, which has no other instance). It is not a receipt
	// from the other instances: each passes the change to its listeners
	// when it reads it (within its poll, up to 2 s with azurequeues).
	DeliverySent Delivery = metadata.DeliverySent
	// DeliveryPending: funchost took the change, and had not sent it to
	// every instance when it answered: it waits its turn past
	// MaxChangesPerSecond (Waits "rate"; merged with a change of the same
	// resource that waits), or the backplane did not take it within 2 s
	// (Waits "backplane": storage slow, paused or unreachable; funchost
	// keeps trying for up to 10 s). It may still reach the other
	// instances, or not.
	DeliveryPending Delivery = metadata.DeliveryPending
	// DeliveryMissed: the backplane failed to take the change for some
	// other instances (Missed of Of, when it counted them) or for all: their
	// clients do not hear of it, and it is not sent again. The clients of
	// funchost's own instance did.
	DeliveryMissed Delivery = metadata.DeliveryMissed
)

// Announcement is what the host did with an announced change, as far as
// it knew when it answered. No host confirms that another instance's
// clients received a change: DeliverySent is the most it says.
type Announcement struct {
	// Delivery is DeliverySent, DeliveryPending or DeliveryMissed; "" from
	// a host that took the change and said no more (an earlier funchost).
	Delivery Delivery
	// Waits says what a pending change waits for: "rate" or "backplane".
	Waits string
	// Missed and Of: for a missed change, how many other instances the
	// backplane did not reach, of how many it tried; 0 when it did not
	// count them.
	Missed, Of int
}

// checkChangedURI applies the rules of a changed resource's URI.
func checkChangedURI(uri string) error {
	switch {
	case len(uri) > metadata.MaxChangeURI:
		return fmt.Errorf("%w: the uri is %d bytes, more than %d", ErrBadChange, len(uri), metadata.MaxChangeURI)
	case binding.IsURITemplate(uri):
		return fmt.Errorf("%w: a resource template is not a resource; name the URI that changed", ErrBadChange)
	}
	if err := binding.ValidateResourceURI(uri); err != nil {
		return fmt.Errorf("%w: %w", ErrBadChange, err)
	}
	return nil
}

// quoteURI names a URI in a message, cut to a readable length.
func quoteURI(uri string) string {
	if len(uri) > 200 {
		uri = uri[:200] + "…"
	}
	return strconv.Quote(uri)
}

// changeChannel reads the channel the host offers in the environment (see
// metadata.EnvChangesURL): a plain http URL to a loopback address and a key.
func changeChannel() (u, key string, ok bool) {
	u, key = os.Getenv(metadata.EnvChangesURL), os.Getenv(metadata.EnvChangesKey)
	if u == "" || key == "" {
		return "", "", false
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "http" || p.User != nil || !loopbackHost(p.Hostname()) {
		return "", "", false
	}
	return u, key, true
}

// errNoChangeChannel says why nothing was announced.
const errNoChangeChannel = notSupported("this host offers no channel for changes (the real Azure Functions host has none; funchost sets " +
	metadata.EnvChangesURL + " for the worker it starts)")

// announce POSTs one change to the host and reads what it did with it.
func announce(ctx context.Context, c metadata.Change) (Announcement, error) {
	u, key, ok := changeChannel()
	if !ok {
		return Announcement{}, errNoChangeChannel
	}
	body, err := metadata.Marshal(&c)
	if err != nil {
		return Announcement{}, fmt.Errorf("encoding the change: %w", err)
	}
	if len(body) > metadata.MaxChangeBytes {
		return Announcement{}, fmt.Errorf("%w: %d bytes, more than %d", ErrBadChange, len(body), metadata.MaxChangeBytes)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return Announcement{}, fmt.Errorf("sending the change: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := notifyClient.Do(req)
	if err != nil {
		return Announcement{}, fmt.Errorf("sending the change: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	switch resp.StatusCode {
	case http.StatusOK:
		return announcementOf(msg), nil
	case http.StatusNoContent:
		return Announcement{}, nil
	}
	ce := &ChangeError{Status: resp.StatusCode, Message: string(bytes.TrimSpace(msg))}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		ce.RetryAfter = time.Duration(s) * time.Second
	}
	return Announcement{}, ce
}

// announcementOf reads the host's metadata.ChangeReceipt; a body that is
// not one (a host that says no more) gives an Announcement that says
// nothing: the host took the change all the same.
func announcementOf(body []byte) Announcement {
	var rc metadata.ChangeReceipt
	if json.Unmarshal(body, &rc) != nil {
		return Announcement{}
	}
	switch d := Delivery(rc.Delivery); d {
	case DeliverySent, DeliveryPending, DeliveryMissed:
		return Announcement{Delivery: d, Waits: rc.Waits, Missed: max(rc.Missed, 0), Of: max(rc.Of, 0)}
	}
	return Announcement{}
}
