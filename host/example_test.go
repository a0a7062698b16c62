package host_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/funcmcp/funcmcp/host"
	"github.com/funcmcp/funcmcp/metadata"
)

// Example loads a function app with one tool and asks the MCP endpoint for
// tools/list, as an MCP client would.
func Example() {
	root, _ := os.MkdirTemp("", "funchost-example")
	defer os.RemoveAll(root)
	_ = os.WriteFile(filepath.Join(root, "host.json"), []byte(`{"version":"2.0"}`), 0o644)
	fn, _ := metadata.NewToolFunction("get_weather", &metadata.ToolOptions{
		ToolName:     "get_weather",
		Description:  "Current weather in a city.",
		Properties:   []metadata.ToolProperty{{PropertyName: "city", PropertyType: "string", Description: "The city.", IsRequired: true}},
		OutputSchema: `{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`,
	})
	_ = metadata.WriteFunction(root, fn)

	h, err := host.New(&host.Options{
		ScriptRoot: root,
		WorkerURL:  "http://127.0.0.1:1", // a running worker: start no process
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		SystemKey:  "example-key", // the mcp_extension key clients must send

	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()

	req, _ := http.NewRequest("POST", srv.URL+"/runtime/webhooks/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Functions-Key", "example-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var pretty bytes.Buffer
	_ = json.Indent(&pretty, body, "", "  ")
	fmt.Println(pretty.String())
	// Output:
	// {
	//   "jsonrpc": "2.0",
	//   "id": 1,
	//   "result": {
	//     "tools": [
	//       {
	//         "name": "get_weather",
	//         "description": "Current weather in a city.",
	//         "inputSchema": {
	//           "type": "object",
	//           "properties": {
	//             "city": {
	//               "type": "string",
	//               "description": "The city."
	//             }
	//           },
	//           "required": [
	//             "city"
	//           ]
	//         },
	//         "outputSchema": {
	//           "type": "object",
	//           "properties": {
	//             "temp": {
	//               "type": "number"
	//             }
	//           },
	//           "required": [
	//             "temp"
	//           ]
	//         }
	//       }
	//     ]
	//   }
	// }
}
