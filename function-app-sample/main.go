package main

import (
	"github.com/funcmcp/funcmcp/worker"
	workerotel "github.com/funcmcp/funcmcp/worker/otel"
)

func main() {
	newApp().Main()
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
	return app
}
