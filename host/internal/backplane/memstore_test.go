package backplane

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// memStore is an in-memory storage account: queues with metadata,
// visibility timeouts and time to live, and blob containers. It stands in
// for Azure Storage in the tests of what the queue backplane does, so that
// they need no Azurite and run in step with the test: its clock moves only
// when the test moves it (advance), and hook lets a test fail, hold or
// watch any call.
type memStore struct {
	mu         sync.Mutex
	offset     time.Duration // added to the real time: the test's clock
	queues     map[string]*memQueue
	containers map[string]*memContainer
	nextID     atomic.Int64

	// hook, when set, runs before every call with its name ("enqueue",
	// "dequeue", "deleteMessage", "upload", …) and the queue or container;
	// an error it returns is the call's.
	hook atomic.Pointer[func(ctx context.Context, op, name string) error]
}

type memQueue struct {
	md   map[string]string
	msgs []*memMsg
}

type memMsg struct {
	id, pop, text string
	visible       time.Time
	expires       time.Time
}

type memContainer struct {
	modified time.Time
	blobs    map[string]memBlob
}

type memBlob struct {
	data     []byte
	modified time.Time
}

func newMemStore() *memStore {
	return &memStore{queues: map[string]*memQueue{}, containers: map[string]*memContainer{}}
}

func (s *memStore) now() time.Time { return time.Now().Add(s.offset) }

// advance moves the store's clock: leases and times to live run out.
func (s *memStore) advance(d time.Duration) {
	s.mu.Lock()
	s.offset += d
	s.mu.Unlock()
}

func (s *memStore) setHook(h func(ctx context.Context, op, name string) error) { s.hook.Store(&h) }

func (s *memStore) call(ctx context.Context, op, name string) error {
	if h := s.hook.Load(); h != nil && *h != nil {
		if err := (*h)(ctx, op, name); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func notFound(is error, name string) error {
	return &storeError{is: is, err: errorString(name + ": " + is.Error())}
}

type errorString string

func (e errorString) Error() string { return string(e) }

// queueStore of the memStore.
type memQueues struct{ s *memStore }

func (m memQueues) Create(ctx context.Context, name string, md map[string]string) error {
	if err := m.s.call(ctx, "create", name); err != nil {
		return err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	if _, ok := m.s.queues[name]; ok {
		return notFound(errQueueExists, name)
	}
	m.s.queues[name] = &memQueue{md: maps.Clone(md)}
	return nil
}

func (m memQueues) SetMetadata(ctx context.Context, name string, md map[string]string) error {
	if err := m.s.call(ctx, "setMetadata", name); err != nil {
		return err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	q, ok := m.s.queues[name]
	if !ok {
		return notFound(errQueueNotFound, name)
	}
	q.md = maps.Clone(md)
	return nil
}

func (m memQueues) Metadata(ctx context.Context, name string) (map[string]string, error) {
	if err := m.s.call(ctx, "metadata", name); err != nil {
		return nil, err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	q, ok := m.s.queues[name]
	if !ok {
		return nil, notFound(errQueueNotFound, name)
	}
	return maps.Clone(q.md), nil
}

func (m memQueues) Delete(ctx context.Context, name string) error {
	if err := m.s.call(ctx, "deleteQueue", name); err != nil {
		return err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	if _, ok := m.s.queues[name]; !ok {
		return notFound(errQueueNotFound, name)
	}
	delete(m.s.queues, name)
	return nil
}

func (m memQueues) Enqueue(ctx context.Context, name, text string, ttl time.Duration) error {
	if err := m.s.call(ctx, "enqueue", name); err != nil {
		return err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	q, ok := m.s.queues[name]
	if !ok {
		return notFound(errQueueNotFound, name)
	}
	now := m.s.now()
	q.msgs = append(q.msgs, &memMsg{id: strconv.FormatInt(m.s.nextID.Add(1), 10), text: text, visible: now, expires: now.Add(ttl)})
	return nil
}

// Dequeue hands out visible messages in the order they were enqueued (a
// message that comes back after its lease keeps its place).
func (m memQueues) Dequeue(ctx context.Context, name string, n int, visibility time.Duration) ([]queued, error) {
	if err := m.s.call(ctx, "dequeue", name); err != nil {
		return nil, err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	q, ok := m.s.queues[name]
	if !ok {
		return nil, notFound(errQueueNotFound, name)
	}
	now := m.s.now()
	q.msgs = slices.DeleteFunc(q.msgs, func(msg *memMsg) bool { return !now.Before(msg.expires) })
	var out []queued
	for _, msg := range q.msgs {
		if len(out) == n {
			break
		}
		if now.Before(msg.visible) {
			continue
		}
		msg.visible = now.Add(visibility)
		msg.pop = strconv.FormatInt(m.s.nextID.Add(1), 10)
		out = append(out, queued{ID: msg.id, Pop: msg.pop, Text: msg.text})
	}
	return out, nil
}

func (m memQueues) DeleteMessage(ctx context.Context, name, id, pop string) error {
	if err := m.s.call(ctx, "deleteMessage", name); err != nil {
		return err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	q, ok := m.s.queues[name]
	if !ok {
		return notFound(errQueueNotFound, name)
	}
	i := slices.IndexFunc(q.msgs, func(msg *memMsg) bool { return msg.id == id && msg.pop == pop })
	if i < 0 {
		return errorString("404 MessageNotFound")
	}
	q.msgs = slices.Delete(q.msgs, i, i+1)
	return nil
}

func (m memQueues) List(ctx context.Context, prefix string) ([]listed, error) {
	if err := m.s.call(ctx, "listQueues", prefix); err != nil {
		return nil, err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	var out []listed
	for _, name := range slices.Sorted(maps.Keys(m.s.queues)) {
		if strings.HasPrefix(name, prefix) {
			out = append(out, listed{Name: name, Metadata: maps.Clone(m.s.queues[name].md)})
		}
	}
	return out, nil
}

func (m memQueues) URL() string { return "memory://queues/" }

// count returns the messages in queue name, visible or not.
func (s *memStore) count(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.queues[name]; q != nil {
		return len(q.msgs)
	}
	return 0
}

// texts returns the texts of the messages in queue name.
func (s *memStore) texts(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	if q := s.queues[name]; q != nil {
		for _, m := range q.msgs {
			out = append(out, m.text)
		}
	}
	return out
}

func (s *memStore) hasQueue(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.queues[name]
	return ok
}

func (s *memStore) blobNames(container string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.containers[container]
	if c == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.blobs))
}

func (s *memStore) hasContainer(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.containers[name]
	return ok
}

// blobStore of the memStore.
type memBlobs struct{ s *memStore }

func (m memBlobs) CreateContainer(ctx context.Context, name string) error {
	if err := m.s.call(ctx, "createContainer", name); err != nil {
		return err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	if _, ok := m.s.containers[name]; ok {
		return notFound(errContainerExists, name)
	}
	m.s.containers[name] = &memContainer{modified: m.s.now(), blobs: map[string]memBlob{}}
	return nil
}

func (m memBlobs) DeleteContainer(ctx context.Context, name string) error {
	if err := m.s.call(ctx, "deleteContainer", name); err != nil {
		return err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	if _, ok := m.s.containers[name]; !ok {
		return notFound(errContainerNotFound, name)
	}
	delete(m.s.containers, name)
	return nil
}

func (m memBlobs) Upload(ctx context.Context, container, name string, body []byte) error {
	if err := m.s.call(ctx, "upload", container); err != nil {
		return err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	c, ok := m.s.containers[container]
	if !ok {
		return notFound(errContainerNotFound, container)
	}
	c.blobs[name] = memBlob{data: slices.Clone(body), modified: m.s.now()}
	return nil
}

func (m memBlobs) Download(ctx context.Context, container, name string, limit int64) ([]byte, error) {
	if err := m.s.call(ctx, "download", container); err != nil {
		return nil, err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	c, ok := m.s.containers[container]
	if !ok {
		return nil, notFound(errContainerNotFound, container)
	}
	b, ok := c.blobs[name]
	if !ok {
		return nil, notFound(errBlobNotFound, name)
	}
	if int64(len(b.data)) > limit {
		return nil, errTooLarge
	}
	return slices.Clone(b.data), nil
}

func (m memBlobs) DeleteBlob(ctx context.Context, container, name string) error {
	if err := m.s.call(ctx, "deleteBlob", container); err != nil {
		return err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	c, ok := m.s.containers[container]
	if !ok {
		return notFound(errContainerNotFound, container)
	}
	if _, ok := c.blobs[name]; !ok {
		return notFound(errBlobNotFound, name)
	}
	delete(c.blobs, name)
	return nil
}

func (m memBlobs) ListContainers(ctx context.Context, prefix string) ([]listed, error) {
	if err := m.s.call(ctx, "listContainers", prefix); err != nil {
		return nil, err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	var out []listed
	for _, name := range slices.Sorted(maps.Keys(m.s.containers)) {
		if strings.HasPrefix(name, prefix) {
			out = append(out, listed{Name: name, Modified: m.s.containers[name].modified})
		}
	}
	return out, nil
}

func (m memBlobs) ListBlobs(ctx context.Context, container string) ([]listed, error) {
	if err := m.s.call(ctx, "listBlobs", container); err != nil {
		return nil, err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	c, ok := m.s.containers[container]
	if !ok {
		return nil, notFound(errContainerNotFound, container)
	}
	var out []listed
	for _, name := range slices.Sorted(maps.Keys(c.blobs)) {
		out = append(out, listed{Name: name, Modified: c.blobs[name].modified})
	}
	return out, nil
}
