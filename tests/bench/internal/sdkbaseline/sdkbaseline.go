// Package sdkbaseline is the benchmarks' baseline server: the official MCP
// Go SDK (github.com/modelcontextprotocol/go-sdk) serving the sample's
// get_weather computation, as a Go developer would write it without funcmcp,
// and the sample's holidays://{country}/{year} resources and plan_days_off
// prompt (package function-app-sample/holidays).
//
// Every tool it serves runs package function-app-sample/weather through the
// SDK's typed AddTool with the input and output schemas it is given, so the
// SDK validates the arguments and the output as funchost and the worker do.
// The tests/bench/sdkserver command serves it in a process of its own; the
// in-process benchmarks use it directly.
package sdkbaseline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcmcp/funcmcp/function-app-sample/holidays"
	"github.com/funcmcp/funcmcp/function-app-sample/weather"
)

// Tool is one tool to serve, in the shape of a tools/list entry.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// weatherArgs are get_weather's arguments, as the sample decodes them.
type weatherArgs struct {
	City  string `json:"city"`
	Units string `json:"units,omitempty"`
	Days  int    `json:"days,omitempty"`
	Date  string `json:"date,omitempty"`
}

// handleWeather is the sample's get_weather handler written for the SDK.
func handleWeather(_ context.Context, _ *mcp.CallToolRequest, args weatherArgs) (*mcp.CallToolResult, *weather.Forecast, error) {
	start := time.Now().UTC()
	if args.Date != "" {
		d, err := time.Parse(time.DateOnly, args.Date)
		if err != nil {
			return nil, nil, fmt.Errorf("date %q is not YYYY-MM-DD", args.Date)
		}
		start = d
	}
	f, err := weather.Compute(args.City, args.Units, start, args.Days)
	if err != nil {
		return nil, nil, err
	}
	return nil, f, nil
}

// handleWeatherText is handleWeather for a tool without an output schema.
func handleWeatherText(ctx context.Context, req *mcp.CallToolRequest, args weatherArgs) (*mcp.CallToolResult, any, error) {
	_, f, err := handleWeather(ctx, req, args)
	if err != nil {
		return nil, nil, err
	}
	data, err := json.Marshal(f)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}}, nil, nil
}

// NewServer returns an SDK server with every tool of tools, each running the
// weather computation with its own schemas (the SDK resolves them here).
func NewServer(tools []Tool) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "sdk-baseline", Version: "1.0.0"},
		&mcp.ServerOptions{CompletionHandler: completeYear})
	for _, d := range tools {
		t := &mcp.Tool{Name: d.Name, Description: d.Description}
		if len(d.InputSchema) > 0 {
			t.InputSchema = d.InputSchema
		}
		if len(d.OutputSchema) == 0 || string(d.OutputSchema) == "null" {
			// A tool without an output schema (the sample has some): the
			// same computation, answered as text.
			mcp.AddTool(server, t, handleWeatherText)
			continue
		}
		t.OutputSchema = d.OutputSchema
		mcp.AddTool(server, t, handleWeather)
	}
	addHolidays(server)
	return server
}

// addHolidays adds what the sample serves from package
// function-app-sample/holidays, written for the SDK: the
// holidays://{country}/{year} resource template and the plan_days_off
// prompt, with the sample's answers.
func addHolidays(server *mcp.Server) {
	server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "holidays://{country}/{year}", Name: "holidays",
		Title: "Public holidays of a year", MIMEType: "application/json",
		Description: "The public holidays of a country (GB, NO or US) in a year (1900 to 2199), as a JSON array in date order."},
		readHolidays)
	server.AddPrompt(&mcp.Prompt{Name: "plan_days_off", Title: "Plan days off",
		Description: "Plan a year's days off around the public holidays of a country.",
		Arguments: []*mcp.PromptArgument{
			{Name: "country", Description: "ISO country code: GB, NO or US.", Required: true},
			{Name: "year", Description: "The year to plan; the current year when omitted."},
		}}, planDaysOff)
}

// completeYear completes the year of holidays://{country}/{year} as the
// sample does: the years that can be read starting with the value, the
// first 100 of them with the total.
func completeYear(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var years []string
	if req.Params.Ref.URI == "holidays://{country}/{year}" && req.Params.Argument.Name == "year" {
		for y := holidays.MinYear; y <= holidays.MaxYear; y++ {
			if s := strconv.Itoa(y); strings.HasPrefix(s, req.Params.Argument.Value) {
				years = append(years, s)
			}
		}
	}
	const most = 100
	res := &mcp.CompleteResult{}
	res.Completion.Total = len(years)
	res.Completion.HasMore = len(years) > most
	res.Completion.Values = years[:min(len(years), most)]
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	return res, nil
}

// holidaysJSON is the JSON array of a country's holidays in a year.
func holidaysJSON(country string, year int) (string, error) {
	list, err := holidays.Compute(country, year)
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(list)
	return string(data), err
}

// readHolidays reads holidays://{country}/{year}, as the sample does.
func readHolidays(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, _ := strings.CutPrefix(uri, "holidays://")
	country, yearText, _ := strings.Cut(rest, "/")
	country = strings.ToUpper(country)
	if !slices.Contains(holidays.Countries, country) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	year, err := strconv.Atoi(yearText)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	text, err := holidaysJSON(country, year)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: text}}}, nil
}

// planDaysOff is the sample's plan_days_off prompt.
func planDaysOff(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	country := strings.ToUpper(strings.TrimSpace(req.Params.Arguments["country"]))
	year := time.Now().UTC().Year()
	if y := req.Params.Arguments["year"]; y != "" {
		n, err := strconv.Atoi(y)
		if err != nil {
			return nil, fmt.Errorf("year %q is not a number", y)
		}
		year = n
	}
	text, err := holidaysJSON(country, year)
	if err != nil {
		return nil, err
	}
	name := holidays.CountryNames[country]
	return &mcp.GetPromptResult{
		Description: fmt.Sprintf("Days off in %s, %d", name, year),
		Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: fmt.Sprintf("holidays://%s/%d", country, year), MIMEType: "application/json", Text: text}}},
			{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf(
				"These are the public holidays of %s in %d. Suggest which days to take off to get the longest "+
					"breaks for the fewest days of leave, and list the resulting breaks.", name, year)}},
		},
	}, nil
}

// Handler serves server over Streamable HTTP at /mcp (stateless or with
// sessions) and, for the loopback figures measured beside it, POST /echo,
// which answers a small fixed JSON body, and GET /bytes?n=N, which answers
// N bytes held in memory (at most 64 MiB).
func Handler(server *mcp.Server, stateless bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: stateless}))
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	var blob []byte
	var blobOnce sync.Once
	mux.HandleFunc("GET /bytes", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil || n < 0 || n > 64<<20 {
			http.Error(w, "n must be a byte count up to 64 MiB", http.StatusBadRequest)
			return
		}
		blobOnce.Do(func() { blob = bytes.Repeat([]byte("x"), 64<<20) })
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(blob[:n])
	})
	return mux
}
