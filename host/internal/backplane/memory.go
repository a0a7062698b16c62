package backplane

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// Hub joins the Memory backplanes of one process.
type Hub struct {
	mu        sync.RWMutex
	instances map[string]*Memory
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{instances: map[string]*Memory{}} }

// Memory is an in-process backplane: Send hands the message straight to the
// instance's receiving side, in the caller's goroutine. It is the default
// of a single funchost.
type Memory struct {
	// OnBroadcast receives what the other instances of the hub broadcast
	// (see [Memory.Broadcast]), one call at a time; nil drops it. Set it
	// before Start.
	OnBroadcast func(wire []byte)

	hub  *Hub
	id   string
	hold HoldOptions
	log  *slog.Logger

	mu     sync.RWMutex
	in     *inbound
	bcasts *fanIn
}

// NewMemory returns the backplane of instance id on hub. hold bounds what
// it holds for full streams (zero values: defaults); log may be nil.
func NewMemory(hub *Hub, id string, hold HoldOptions, log *slog.Logger) *Memory {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Memory{hub: hub, id: id, hold: hold, log: log}
}

// Start registers the instance on its hub.
func (m *Memory) Start(ctx context.Context, deliver Deliver) error {
	in := newInbound("memory "+m.id, deliver, m.hold, m.log)
	in.start(context.WithoutCancel(ctx))
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	if _, ok := m.hub.instances[m.id]; ok {
		return fmt.Errorf("starting the backplane: instance %q is already registered", m.id)
	}
	bc := newFanIn("memory "+m.id, m.OnBroadcast, m.log)
	bc.start()
	m.mu.Lock()
	m.in, m.bcasts = in, bc
	m.mu.Unlock()
	m.hub.instances[m.id] = m
	return nil
}

// Broadcast hands wire to every other instance of the hub, without
// waiting for any of them.
func (m *Memory) Broadcast(_ context.Context, wire []byte) error {
	if err := checkBroadcast(wire); err != nil {
		return err
	}
	id := newBroadcastID()
	m.hub.mu.RLock()
	defer m.hub.mu.RUnlock()
	for peerID, peer := range m.hub.instances {
		if peerID == m.id {
			continue
		}
		peer.mu.RLock()
		bc := peer.bcasts
		peer.mu.RUnlock()
		if bc != nil {
			bc.offer(id, bytes.Clone(wire))
		}
	}
	return nil
}

// Send offers msg to the instance's stream and returns its outcome.
func (m *Memory) Send(ctx context.Context, instanceID string, msg Message) (Outcome, error) {
	if err := checkSend(instanceID, msg); err != nil {
		return 0, err
	}
	m.hub.mu.RLock()
	to := m.hub.instances[instanceID]
	m.hub.mu.RUnlock()
	if to == nil {
		return 0, fmt.Errorf("sending to instance %q: %w", instanceID, ErrUnknownInstance)
	}
	to.mu.RLock()
	in := to.in
	to.mu.RUnlock()
	if in == nil {
		return 0, fmt.Errorf("sending to instance %q: %w", instanceID, ErrUnknownInstance)
	}
	out, _ := in.offer(ctx, msg, func() {})
	return out, nil
}

// Stop removes the instance from its hub and drops what it holds.
func (m *Memory) Stop(context.Context) error {
	m.hub.mu.Lock()
	if m.hub.instances[m.id] == m {
		delete(m.hub.instances, m.id)
	}
	m.hub.mu.Unlock()
	m.mu.Lock()
	in, bc := m.in, m.bcasts
	m.in, m.bcasts = nil, nil
	m.mu.Unlock()
	if in != nil {
		in.stop()
	}
	if bc != nil {
		bc.stop()
	}
	return nil
}
