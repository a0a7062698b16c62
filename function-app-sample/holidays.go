package main

import (
	"context"

	hol "github.com/funcmcp/funcmcp/function-app-sample/holidays"
	"github.com/funcmcp/funcmcp/worker"
)

// HolidaysInput is list_holidays' arguments.
type HolidaysInput struct {
	Country string `json:"country" jsonschema:"ISO 3166-1 alpha-2 country code: US, GB (England and Wales) or NO."`
	Year    int    `json:"year" jsonschema:"Calendar year, 1900 to 2199."`
}

// Holiday is one public holiday.
type Holiday = hol.Holiday

// holidayCountries lists the supported country codes.
var holidayCountries = hol.Countries

func registerHolidays(app *worker.App) {
	// A slice result: the output schema and structuredContent are wrapped in
	// an object under the default field, {"result": [...]}.
	//docs:begin register
	worker.AddTool(app, "list_holidays", func(_ context.Context, _ *worker.ToolContext, in HolidaysInput) (*worker.Result, []Holiday, error) {
		list, err := holidays(in.Country, in.Year)
		return nil, list, err
	}).
		//docs:end register
		WithTitle("Public holidays").
		WithDescription("List the statutory public holidays of a country for a year, in date order. " +
			"Supported countries: US (federal holidays), GB (England and Wales bank holidays) and NO. " +
			"Dates are the holidays themselves; substitute days off are not listed.")
}

// holidays computes the public holidays of a country in a year.
func holidays(country string, year int) ([]Holiday, error) { return hol.Compute(country, year) }
