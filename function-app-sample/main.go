package main

import (
	"github.com/funcmcp/funcmcp/worker"
)

func main() {
	newApp().Main()
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
	return app
}
