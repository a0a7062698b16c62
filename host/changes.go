package host

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// Changes clients listen for (subscriptions/listen on 2026-07-28,
// resources/subscribe and the list_changed notifications before): the
// host keeps one hub of the listeners of this instance (see
// docs/configuration.md for its limits). A change reaches it through
// Host.publish; the task store publishes every task state change itself.

// The settings of the listener limits (whole numbers).
const (
	// SettingListenersPerClient bounds the open listeners (listen streams
	// and session GET streams) of one client; default 64.
	SettingListenersPerClient = notify.SettingListenersPerClient
	// SettingListeners bounds the open listeners of all clients; default
	// 10,000.
	SettingListeners = notify.SettingListeners
	// SettingListenSubscriptions bounds the resource URIs and task ids one
	// listener follows (and the URIs one session subscribes to); default
	// 256.
	SettingListenSubscriptions = notify.SettingSubscriptions
	// SettingListenQueue bounds the notifications waiting for one
	// listener; default 64. A listener that falls further behind is ended.
	SettingListenQueue = notify.SettingQueue
	// SettingSubscribedSessionsPerClient bounds the legacy sessions of one
	// client whose resource subscriptions an instance keeps; default 256.
	SettingSubscribedSessionsPerClient = mcp.SettingSubscribedSessions
)

// subscribedSessions is the bound on the legacy sessions with resource
// subscriptions that SettingSubscribedSessionsPerClient asks for (the
// zero Limit, the defaults, when it is not set).
func (h *Host) subscribedSessions() (owner.Limit, error) {
	v, from := h.cfg.Lookup(SettingSubscribedSessionsPerClient)
	if v == "" {
		return owner.Limit{}, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || n <= 0 {
		return owner.Limit{}, fmt.Errorf("reading %s from %s: %q is not a positive whole number", SettingSubscribedSessionsPerClient, from, v)
	}
	return owner.Limit{PerOwner: n}, nil
}

// newHub makes the hub of this instance with the limits the settings
// ask for.
func (h *Host) newHub() (*notify.Hub, error) {
	var l notify.Limits
	var perOwner, global, subs, queue int64
	for _, d := range []struct {
		setting string
		dst     *int64
	}{{SettingListenersPerClient, &perOwner}, {SettingListeners, &global}, {SettingListenSubscriptions, &subs}, {SettingListenQueue, &queue}} {
		v, from := h.cfg.Lookup(d.setting)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("reading %s from %s: %q is not a positive whole number", d.setting, from, v)
		}
		*d.dst = n
	}
	l.Listeners = owner.Limit{PerOwner: perOwner, Global: global}
	l.Subscriptions, l.Queue = int(subs), int(queue)
	if h.opts.listenLimits != nil {
		l = *h.opts.listenLimits
	}
	return notify.NewHub(l, h.log), nil
}

// publish announces a change made on this instance: it reaches the
// listeners here and, through the relay when one is set, every other
// instance. It never waits for a listener or a backplane. The worker's
// announcements (host/announce.go) take the same way, tracked
// (publishAnnounced), so that the worker hears how far they got.
func (h *Host) publish(c notify.Change) { h.changes.Publish(c) }

// setRelay sets what carries this instance's changes to the others (nil:
// none); what the others send must reach receiveChange.
func (h *Host) setRelay(r notify.Relay) { h.changes.SetRelay(r) }

// receiveChange hands a change another instance relayed (its wire form)
// to the listeners here only.
func (h *Host) receiveChange(wire []byte) error { return h.changes.Receive(wire) }
