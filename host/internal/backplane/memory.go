package backplane

import (
	"context"
	"fmt"
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
// instance's Deliver. It is the default of a single funchost.
type Memory struct {
	hub     *Hub
	id      string
	mu      sync.RWMutex
	deliver Deliver
}

// NewMemory returns the backplane of instance id on hub.
func NewMemory(hub *Hub, id string) *Memory { return &Memory{hub: hub, id: id} }

// Start registers the instance on its hub.
func (m *Memory) Start(_ context.Context, deliver Deliver) error {
	m.mu.Lock()
	m.deliver = deliver
	m.mu.Unlock()
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	if _, ok := m.hub.instances[m.id]; ok {
		return fmt.Errorf("starting the backplane: instance %q is already registered", m.id)
	}
	m.hub.instances[m.id] = m
	return nil
}

// Send delivers msg to the instance, in the caller's goroutine.
func (m *Memory) Send(ctx context.Context, instanceID string, msg Message) error {
	m.hub.mu.RLock()
	to := m.hub.instances[instanceID]
	m.hub.mu.RUnlock()
	if to == nil {
		return fmt.Errorf("sending to instance %q: %w", instanceID, ErrUnknownInstance)
	}
	to.mu.RLock()
	deliver := to.deliver
	to.mu.RUnlock()
	if deliver == nil {
		return fmt.Errorf("sending to instance %q: %w", instanceID, ErrUnknownInstance)
	}
	deliver(ctx, msg)
	return nil
}

// Stop removes the instance from its hub.
func (m *Memory) Stop(context.Context) error {
	m.hub.mu.Lock()
	if m.hub.instances[m.id] == m {
		delete(m.hub.instances, m.id)
	}
	m.hub.mu.Unlock()
	m.mu.Lock()
	m.deliver = nil
	m.mu.Unlock()
	return nil
}
