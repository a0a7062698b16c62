// Command worker is a minimal custom handler used by the host tests: it
// speaks the custom-handler protocol with net/http and encoding/json only.
//
//	GET /              200 "ok"
//	POST /get_weather  {"city","temp"} as a result envelope with structuredContent
//	POST /env          the environment, arguments and working directory it runs with
//	POST /exit         exits at once with the exit code in argument "code" (a crash mid-call)
//	POST /sleep        sleeps "ms" milliseconds (or until the call is cancelled), then answers
//	POST /freeze       hangs, and from then on so does every request, GET / included: a hung worker
//	anything else      404
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/funcmcp/funcmcp/metadata"
)

// frozen is set by /freeze: the worker stops answering anything.
var frozen atomic.Bool

func main() {
	port := os.Getenv(metadata.EnvCustomHandlerPort)
	if port == "" {
		fmt.Fprintln(os.Stderr, "worker: no port")
		os.Exit(2)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		if frozen.Load() {
			select {} // hung
		}
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("POST /{function}", invoke)
	if ms, err := strconv.Atoi(os.Getenv("EXIT200_AFTER_MS")); err == nil {
		// Ask for a restart (exit code 200) shortly after every start.
		go func() {
			time.Sleep(time.Duration(ms) * time.Millisecond)
			fmt.Println("asking for a restart")
			os.Exit(200)
		}()
	}
	fmt.Printf("worker listening on port %s\n", port)
	fmt.Fprintf(os.Stderr, "worker stderr line\n")
	if err := http.ListenAndServe("127.0.0.1:"+port, mux); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

// hostKeys lists the variables of the environment that hold the host's
// function keys: there must be none.
func hostKeys() []string {
	keys := []string{}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name == "FUNCHOST_MASTER_KEY" || name == "FUNCHOST_MCP_EXTENSION_KEY" {
			keys = append(keys, name)
		}
	}
	return keys
}

func invoke(w http.ResponseWriter, r *http.Request) {
	fn := r.PathValue("function")
	var req metadata.InvocationRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	tc, err := metadata.ToolContextFromRequest(&req, metadata.TriggerBindingName)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fmt.Printf("invoked %s (invocation %s)\n", fn, r.Header.Get(metadata.HeaderInvocationID))
	var structured any
	switch fn {
	case "get_weather":
		var city string
		_ = json.Unmarshal(tc.Arguments["city"], &city)
		structured = map[string]any{"city": city, "temp": 21.5}
	case "env":
		wd, _ := os.Getwd()
		structured = map[string]any{
			"pid":        os.Getpid(),
			"args":       os.Args[1:],
			"wd":         wd,
			"port":       os.Getenv(metadata.EnvCustomHandlerPort),
			"legacyPort": os.Getenv(metadata.EnvHTTPWorkerPort),
			"workerId":   os.Getenv(metadata.EnvWorkerID),
			"appRoot":    os.Getenv(metadata.EnvAppRootPath),
			"greeting":   os.Getenv("GREETING"),
			"userAgent":  r.Header.Get("User-Agent"),
			"hostHeader": strings.TrimSpace(r.Header.Get(metadata.HeaderHostVersion)),
			"hostKeys":   hostKeys(),
		}
	case "sleep":
		var ms int
		_ = json.Unmarshal(tc.Arguments["ms"], &ms)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
			fmt.Printf("sleep cancelled\n")
			return
		}
		structured = map[string]any{"slept": ms}
	case "freeze":
		fmt.Printf("freezing\n")
		frozen.Store(true)
		select {} // never answers
	case "exit":
		var code int
		_ = json.Unmarshal(tc.Arguments["code"], &code)
		fmt.Printf("exiting with code %d\n", code)
		os.Exit(code)
	default:
		http.Error(w, `{"error":"unknown function"}`, http.StatusNotFound)
		return
	}
	sc, _ := json.Marshal(structured)
	s := string(sc)
	env, _ := json.Marshal(metadata.ToolResult{Type: "text", Content: string(metadata.TextContent(s)), StructuredContent: &s})
	rv, _ := json.Marshal(string(env))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(metadata.InvocationResponse{
		Outputs:     map[string]json.RawMessage{},
		Logs:        []string{"worker handled " + fn},
		ReturnValue: rv,
	})
}
