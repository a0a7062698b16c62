package binding

import (
	"encoding/json"
	"testing"

	"github.com/funcmcp/funcmcp/metadata"
)

// BenchmarkFastValidate measures the one-pass check of a value's JSON text
// against a schema inside the fast subset, without decoding it.
func BenchmarkFastValidate(b *testing.B) {
	tool := forecastTool(b)
	if tool.Output.fast == nil {
		b.Fatal("the forecast schema has no fast check")
	}
	data := []byte(validForecast)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if !fastValid(tool.Output.fast, data) {
			b.Fatal("not valid")
		}
	}
}

// BenchmarkDecodeDirectReply measures reading a direct reply as a funcmcp
// worker writes it: one pass over the text, blocks checked.
func BenchmarkDecodeDirectReply(b *testing.B) {
	reply, err := json.Marshal(metadata.DirectReply{
		Logs: []string{"handled get_weather"},
		Result: &metadata.CallToolResult{
			Content:           []json.RawMessage{metadata.TextContent("Seattle: 11.5 °C, light rain"), metadata.TextContent(validForecast)},
			StructuredContent: json.RawMessage(validForecast),
		},
		Checked: "0123456789abcdef",
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		d, _, err := DecodeDirectReply(reply)
		if err != nil || len(d.Result.Content) != 2 {
			b.Fatal(err)
		}
	}
}
