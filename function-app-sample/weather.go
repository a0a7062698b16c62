package main

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/funcmcp/funcmcp/function-app-sample/weather"
	"github.com/funcmcp/funcmcp/worker"
)

// weatherSchema is get_weather's output schema, declared by hand.
//
//go:embed weather.schema.json
var weatherSchema string

// The forecast computation lives in package weather; these names keep the
// sample's own code short.
type Forecast = weather.Forecast

var (
	conditions     = weather.Conditions
	windDirections = weather.WindDirections
	forecast       = weather.Compute
)

func registerWeather(app *worker.App) {
	//docs:begin register
	app.ConfigureMcpTool("get_weather").
		WithTitle("Weather forecast").
		WithDescription("Get the current weather and a daily forecast (1 to 7 days) for a city. "+
			"Temperatures are in Celsius and wind in km/h for metric units, Fahrenheit and mph for imperial units.").
		WithProperty("city", worker.String, "City name, for example \"Oslo\" or \"Buenos Aires\".", worker.Required).
		WithProperty("units", worker.String.Enum("metric", "imperial"), "Unit system; metric when omitted.", worker.Optional).
		WithProperty("days", worker.Integer, "Number of forecast days, 1 to 7; 3 when omitted.", worker.Optional).
		WithProperty("date", worker.String, "First forecast day as YYYY-MM-DD; today (UTC) when omitted.", worker.Optional).
		WithOutputSchema(weatherSchema).
		WithMetadata("category", "weather").
		Handle(handleWeather)
	//docs:end register
}

func handleWeather(_ context.Context, tc *worker.ToolContext) (*worker.Result, error) {
	var args struct {
		City  string `json:"city"`
		Units string `json:"units"`
		Days  int    `json:"days"`
		Date  string `json:"date"`
	}
	if err := tc.BindArguments(&args); err != nil {
		return nil, err
	}
	start := time.Now().UTC()
	if args.Date != "" {
		d, err := time.Parse(time.DateOnly, args.Date)
		if err != nil {
			return nil, fmt.Errorf("date %q is not YYYY-MM-DD", args.Date)
		}
		start = d
	}
	f, err := forecast(args.City, args.Units, start, args.Days)
	if err != nil {
		return nil, err
	}
	tc.Logf("forecast for %s: %d days from %s", f.City, len(f.Daily), f.StartDate)
	return &worker.Result{StructuredContent: f}, nil
}
