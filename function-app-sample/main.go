package main

import (
	"context"
	"log/slog"

	"github.com/funcmcp/funcmcp/serve"
	"github.com/funcmcp/funcmcp/worker"
	workerotel "github.com/funcmcp/funcmcp/worker/otel"
)

func main() {
	app := newApp()
	// A timer of the process, outside any invocation: it announces that
	// clock://utc/minute changed every minute (under funchost).
	go tickClock(context.Background(), slog.Default())
	// "handler serve" serves MCP in this one process (package serve);
	// every other command is the app's own (app.Main).
	serve.Main(app)
}

// newApp configures every tool, resource and prompt of the sample.
func newApp() *worker.App {
	//docs:begin telemetry
	// OpenTelemetry is opt-in: with worker/otel the app exports traces and
	// metrics when its environment names an OTLP endpoint; an app without it
	// links none of the OpenTelemetry SDK.
	app := worker.New(&worker.Options{Telemetry: workerotel.New()})
	//docs:end telemetry
	registerWeather(app)
	registerMortgage(app)
	registerHolidays(app)
	registerPrimes(app)
	registerFibonacci(app)
	registerRoman(app)
	registerBarChart(app)
	registerPi(app)
	registerEpidemic(app)
	registerDaysOff(app)
	registerTrip(app)
	registerWhoami(app)
	registerHolidayResources(app)
	registerPrompts(app)
	registerNote(app)
	return app
}
