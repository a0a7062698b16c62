package mcp

import (
	"bytes"
	"net/http"

	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
)

// The package's names for what it writes with from package wire.

const (
	eventMessage = wire.EventMessage
	eventEnd     = wire.EventEnd
	maxPooled    = wire.MaxPooled
)

type sseWriter = wire.SSEWriter

var keepAliveComment = wire.KeepAliveComment

func getBuffer() *bytes.Buffer                              { return wire.GetBuffer() }
func putBuffer(b *bytes.Buffer)                             { wire.PutBuffer(b) }
func beginEvent(b *bytes.Buffer, name string)               { wire.BeginEvent(b, name) }
func endEvent(b *bytes.Buffer)                              { wire.EndEvent(b) }
func appendEvent(b *bytes.Buffer, name string, data []byte) { wire.AppendEvent(b, name, data) }

func setFraming(hdr http.Header, sse bool) { wire.SetFraming(hdr, sse) }
