package main

import (
	"context"
	"log/slog"

	"github.com/funcmcp/funcmcp/worker"
)

func main() {
	app := newApp()
	// A timer of the process, outside any invocation: it announces that
	// clock://utc/minute changed every minute (under funchost).
	go tickClock(context.Background(), slog.Default())
	app.Main()
}

// newApp configures every tool, resource and prompt of the sample.
func newApp() *worker.App {
	app := worker.New(nil)
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
