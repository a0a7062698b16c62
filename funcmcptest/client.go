package funcmcptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ProtocolVersion is the MCP revision [Server.CallTool] speaks.
const ProtocolVersion = "2025-06-18"

// ToolResult is a tools/call result as the client receives it.
type ToolResult struct {
	// Content are the content blocks, each as sent.
	Content []json.RawMessage `json:"content"`
	// StructuredContent is the structured result, as sent; nil when none.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError says the tool failed, or its result broke its output schema:
	// the text content says why.
	IsError bool `json:"isError,omitempty"`
}

// Text is the text of the result's first text block, "" when it has none.
func (r *ToolResult) Text() string {
	for _, c := range r.Content {
		var block struct{ Type, Text string }
		if json.Unmarshal(c, &block) == nil && block.Type == "text" {
			return block.Text
		}
	}
	return ""
}

// Error is a JSON-RPC error the server answered (an unknown tool, a
// missing argument: -32602).
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("MCP error %d: %s", e.Code, e.Message) }

// CallTool calls the tool name with args (anything that encodes to a JSON
// object; nil: none) as a client of [ProtocolVersion] does: initialize,
// notifications/initialized, tools/call, over Streamable HTTP. A JSON-RPC
// error is returned as an *Error; a failing tool is a result with IsError.
func (s *Server) CallTool(ctx context.Context, name string, args any) (*ToolResult, error) {
	c := &client{url: s.URL, http: s.Client()}
	if _, err := c.request(ctx, "initialize", map[string]any{
		"protocolVersion": ProtocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "funcmcptest", "version": "1"},
	}); err != nil {
		return nil, err
	}
	if err := c.notify(ctx, "notifications/initialized"); err != nil {
		return nil, err
	}
	if args == nil {
		args = map[string]any{}
	}
	raw, err := c.request(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return nil, err
	}
	var res ToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decoding the tools/call result: %w", err)
	}
	return &res, nil
}

// client is one session of CallTool.
type client struct {
	url     string
	http    *http.Client
	session string
	id      int
}

// request sends a request and returns its result.
func (c *client) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.id++
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", method, err)
	}
	data, err := c.post(ctx, method, body)
	if err != nil {
		return nil, err
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *Error          `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		return nil, fmt.Errorf("decoding the answer to %s: %w", method, err)
	}
	if msg.Error != nil {
		return nil, msg.Error
	}
	return msg.Result, nil
}

// notify sends a notification.
func (c *client) notify(ctx context.Context, method string) error {
	_, err := c.post(ctx, method, []byte(`{"jsonrpc":"2.0","method":"`+method+`"}`))
	return err
}

// post POSTs one message and returns the response to it: the JSON body,
// or the last message of an SSE stream (notifications come before it);
// nil for a notification's 202.
func (c *client) post(ctx context.Context, method string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("sending %s: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", ProtocolVersion)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sending %s: %w", method, err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	if resp.StatusCode == http.StatusAccepted {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return nil, fmt.Errorf("sending %s: %s: %s", method, resp.Status, bytes.TrimSpace(data))
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return io.ReadAll(resp.Body)
	}
	var last []byte
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
			last = bytes.Clone(bytes.TrimSpace(data))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the answer to %s: %w", method, err)
	}
	if last == nil {
		return nil, fmt.Errorf("reading the answer to %s: the stream held no message", method)
	}
	return last, nil
}
