package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host"
	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
	"github.com/funcmcp/funcmcp/tests/bench/internal/sdkbaseline"
)

// itemsSchema is an output schema whose size grows with its data: an array
// of forecast days (four required fields, an enum, no other properties).
const itemsSchema = `{"type":"object","properties":{"days":{"type":"array","items":{"type":"object",` +
	`"properties":{"date":{"type":"string","format":"date"},"high":{"type":"number"},"low":{"type":"number"},` +
	`"condition":{"type":"string","enum":["sunny","partly_cloudy","cloudy","fog","rain","snow","thunderstorm"]},` +
	`"precipitationChance":{"type":"integer","minimum":0,"maximum":100}},` +
	`"required":["date","high","low","condition","precipitationChance"],"additionalProperties":false}}},` +
	`"required":["days"],"additionalProperties":false}`

// itemsOutput returns a value of itemsSchema of about size bytes.
func itemsOutput(size int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"days":[`)
	for i := 0; sb.Len() < size-2; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"date":"2026-03-%02d","high":%d.5,"low":%d.25,"condition":"partly_cloudy","precipitationChance":%d}`, i%28+1, 10+i%9, i%7, i%101)
	}
	sb.WriteString(`]}`)
	return []byte(sb.String())
}

// BenchmarkValidateOutput_NoCall measures output validation alone, no call
// around it: what the worker and funchost do with a result's
// structuredContent (binding.Schema.ValidateText: one pass over the text
// against the schema compiled at load, or decode + validate when that pass
// cannot vouch for it) for outputs of 200 B, 2 KiB and 64 KiB, beside what
// the SDK's typed AddTool does with the same bytes (encoding/json into any,
// then google/jsonschema-go).
func BenchmarkValidateOutput_NoCall(b *testing.B) {
	ours, err := binding.ParseSchema(binding.OutputSchema, itemsSchema)
	if err != nil {
		b.Fatal(err)
	}
	var sdkSchema jsonschema.Schema
	if err := json.Unmarshal([]byte(itemsSchema), &sdkSchema); err != nil {
		b.Fatal(err)
	}
	resolved, err := sdkSchema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []struct {
		name  string
		bytes int
	}{{"200B", 200}, {"2KiB", 2 << 10}, {"64KiB", 64 << 10}} {
		data := itemsOutput(size.bytes)
		var nsOurs, nsSDK float64
		b.Run(size.name+"/funcmcp", func(b *testing.B) {
			before := binding.CompileCount()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := ours.ValidateText(data); err != nil {
					b.Fatal(err)
				}
			}
			if n := binding.CompileCount() - before; n != 0 {
				b.Fatalf("validating compiled %d schemas", n)
			}
			nsOurs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run(size.name+"/sdk", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.Unmarshal(data, &v); err != nil {
					b.Fatal(err)
				}
				if err := resolved.Validate(v); err != nil {
					b.Fatal(err)
				}
			}
			nsSDK = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		if nsOurs > 0 && nsSDK > 0 {
			record(row{what: fmt.Sprintf("output validation, %s (%d B), no call", size.name, len(data)), unit: "µs",
				ours: nsOurs / 1000, stateless: nsSDK / 1000, ratio: nsOurs / nsSDK, load: loadAvg(),
				detail: "binding.Schema.ValidateText (funcmcp) / encoding/json + google/jsonschema-go (SDK column)"})
		}
		if size.name == "2KiB" {
			validation2KiB = nsOurs
		}
	}
}

// validation2KiB is funcmcp's validation time for a 2 KiB output (ns).
var validation2KiB float64

// validationShare adds the rows comparing validation with a whole call's
// server CPU, at each concurrency measured.
func validationShare() {
	callCPU.Lock()
	defer callCPU.Unlock()
	if validation2KiB == 0 {
		return
	}
	for _, c := range []int{1, 16} {
		d := callCPU.d[c]
		if d == 0 {
			continue
		}
		share := validation2KiB / float64(d.Nanoseconds())
		record(atMost(row{what: fmt.Sprintf("validation share of call CPU, 2 KiB output, c=%d", c), unit: "fraction", ours: share, ratio: share, load: loadAvg(),
			detail: fmt.Sprintf("validation of 2 KiB (%.1f µs; get_weather's output is about 900 B) / funcmcp server CPU per tools/call at c=%d (%.0f µs); zero compiles on the call path is checked by BenchmarkToolsCall_InProcessHost", validation2KiB/1000, c, us(d))}, 0.03))
	}
}

// discardLogger logs as funchost does (text), into io.Discard.
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// BenchmarkIdleSessions_InProcess opens MCP sessions (initialize, then
// notifications/initialized) against funcmcp's endpoint and against the SDK
// stateful server, each served in this process so its heap and goroutines
// can be read, and reports the live heap and goroutines each idle session
// leaves behind once its connections are closed. No tool is called.
func BenchmarkIdleSessions_InProcess(b *testing.B) {
	binaries(b)
	servers(b)
	h, err := host.New(&host.Options{ScriptRoot: built.app, WorkerURL: "http://127.0.0.1:1", Logger: discardLogger(), Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	const n = 500
	handlers := map[string]http.Handler{
		"funcmcp": h.Handler(),
		"sdk":     sdkbaseline.Handler(sdkbaseline.NewServer([]sdkbaseline.Tool{shared.weather}), false),
	}
	paths := map[string]string{"funcmcp": host.MCPPath, "sdk": "/mcp"}
	bytesPer, goPer := map[string]float64{}, map[string]float64{}
	for _, name := range []string{"funcmcp", "sdk"} {
		b.Run(name, func(b *testing.B) {
			srv := httptest.NewServer(handlers[name])
			defer srv.Close()
			for b.Loop() {
				heap0, g0 := settle()
				client := newClient()
				hs, err := sessions(client, srv.URL+paths[name], n)
				if err != nil {
					b.Fatal(err)
				}
				client.CloseIdleConnections()
				runtime.KeepAlive(hs)
				hs, client = nil, nil // what is left is the server's
				heap1, g1 := settle()
				bytesPer[name] = float64(int64(heap1)-int64(heap0)) / n
				goPer[name] = float64(g1-g0) / n
			}
			b.ReportMetric(bytesPer[name], "B/session")
			b.ReportMetric(goPer[name], "goroutines/session")
		})
	}
	load := loadAvg()
	record(row{what: "heap per idle session", unit: "B", ours: bytesPer["funcmcp"], stateful: bytesPer["sdk"], load: load,
		detail: fmt.Sprintf("live heap the server keeps for %d idle sessions (in process, once the client and its connections are gone)", n)})
	record(row{what: "goroutines per idle session", unit: "goroutines", ours: goPer["funcmcp"], stateful: goPer["sdk"], load: load,
		goal: "0 (funcmcp)", met: yesNo(goPer["funcmcp"] < 0.01), detail: "after the clients' connections are closed"})
}

// settle waits for closed connections' goroutines to end, collects garbage
// and returns the live heap and the goroutine count.
func settle() (uint64, int) {
	prev := -1
	for i := 0; i < 100; i++ {
		g := runtime.NumGoroutine()
		if g == prev {
			break
		}
		prev = g
		time.Sleep(20 * time.Millisecond)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}

// BenchmarkToolsCall_InProcessHost makes real get_weather tools/calls with
// the host in this process (the sample worker still a process of its own)
// and the SDK stateless server in this process, with the same raw client,
// and reports allocations per call: client + server, the worker's own not
// counted. It fails if a call compiles a schema.
func BenchmarkToolsCall_InProcessHost(b *testing.B) {
	binaries(b)
	servers(b)
	port := testutil.FreePort(b)
	w, workerURL, err := startWorker(port)
	if err != nil {
		b.Fatal(err)
	}
	defer w.stop()
	h, err := host.New(&host.Options{ScriptRoot: built.app, WorkerURL: workerURL, Logger: discardLogger(), Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	servers := map[string]struct {
		handler http.Handler
		path    string
	}{
		"funcmcp": {h.Handler(), host.MCPPath},
		"sdk":     {sdkbaseline.Handler(sdkbaseline.NewServer([]sdkbaseline.Tool{shared.weather}), true), "/mcp"},
	}
	allocs := map[string]float64{}
	for _, name := range []string{"funcmcp", "sdk"} {
		b.Run(name, func(b *testing.B) {
			srv := httptest.NewServer(servers[name].handler)
			defer srv.Close()
			client := newClient()
			defer client.CloseIdleConnections()
			url := srv.URL + servers[name].path
			hdr, err := mcpHeaders(client, url)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			call := func() {
				status, body, _, err := post(ctx, client, url, []byte(weatherCall), hdr)
				if err == nil {
					err = checkToolResult(status, body)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			call() // warm up
			compiles := binding.CompileCount()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			b.ResetTimer()
			for b.Loop() {
				call()
			}
			b.StopTimer()
			runtime.ReadMemStats(&m1)
			if n := binding.CompileCount() - compiles; n != 0 {
				b.Fatalf("%d schemas compiled during %d calls", n, b.N)
			}
			allocs[name] = float64(m1.Mallocs-m0.Mallocs) / float64(b.N)
			b.ReportMetric(allocs[name], "process-allocs/call")
		})
	}
	record(row{what: "allocations per tools/call, client + server in one process", unit: "allocs",
		ours: allocs["funcmcp"], stateless: allocs["sdk"], ratio: allocs["funcmcp"] / allocs["sdk"], load: loadAvg(),
		detail: "funchost in process (its worker's allocations not counted) / SDK stateless in process; same raw client"})
}

// weatherArguments are the arguments of a get_weather call, as a client
// sends them.
const weatherArguments = `{"city":"Buenos Aires","units":"metric","days":7,"date":"2026-03-01"}`

// BenchmarkValidateInput_NoCall measures what checking a call's arguments
// costs, no call around it: binding.Tool.CheckInput on get_weather's
// arguments against its input schema (as the sample declares it, compiled
// at load), which funchost runs before forwarding a call and the worker
// before its handler, beside the SDK's check of the same bytes
// (encoding/json into any, then google/jsonschema-go).
func BenchmarkValidateInput_NoCall(b *testing.B) {
	fn, err := metadata.NewToolFunction("get_weather", &metadata.ToolOptions{ToolName: "get_weather", Description: "Weather.",
		Properties: []metadata.ToolProperty{
			{PropertyName: "city", PropertyType: "string", Description: "City name.", IsRequired: true},
			{PropertyName: "units", PropertyType: "string", Description: "Unit system.", EnumValues: []string{"metric", "imperial"}},
			{PropertyName: "days", PropertyType: "integer", Description: "Forecast days."},
			{PropertyName: "date", PropertyType: "string", Description: "First day."},
		}})
	if err != nil {
		b.Fatal(err)
	}
	tool, err := binding.LoadTool(fn, fn.ToolTriggers()[0], "get_weather/function.json")
	if err != nil {
		b.Fatal(err)
	}
	var sdkSchema jsonschema.Schema
	if err := json.Unmarshal(tool.Input.JSON(), &sdkSchema); err != nil {
		b.Fatal(err)
	}
	resolved, err := sdkSchema.Resolve(nil)
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(weatherArguments)
	strict := metadata.OutputSettings{}
	var nsOurs, nsSDK float64
	b.Run("funcmcp", func(b *testing.B) {
		before := binding.CompileCount()
		b.SetBytes(int64(len(args)))
		b.ReportAllocs()
		for b.Loop() {
			if issue := tool.CheckInput(args, strict); issue != nil {
				b.Fatal(issue)
			}
		}
		if n := binding.CompileCount() - before; n != 0 {
			b.Fatalf("checking arguments compiled %d schemas", n)
		}
		nsOurs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("sdk", func(b *testing.B) {
		b.SetBytes(int64(len(args)))
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(args, &v); err != nil {
				b.Fatal(err)
			}
			if err := resolved.Validate(v); err != nil {
				b.Fatal(err)
			}
		}
		nsSDK = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	if nsOurs > 0 && nsSDK > 0 {
		record(row{what: fmt.Sprintf("input validation, get_weather arguments (%d B), no call", len(args)), unit: "µs",
			ours: nsOurs / 1000, stateless: nsSDK / 1000, ratio: nsOurs / nsSDK, load: loadAvg(),
			detail: "binding.Tool.CheckInput (funcmcp) / encoding/json + google/jsonschema-go (SDK column)"})
	}
}
