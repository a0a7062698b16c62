package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	hol "github.com/funcmcp/funcmcp/function-app-sample/holidays"
	"github.com/funcmcp/funcmcp/worker"
)

// holidayCountryNames names the countries list_holidays knows.
var holidayCountryNames = hol.CountryNames

// holidayYears are the years offered as completions: the years from
// hol.MinYear to hol.MaxYear that start with prefix, every one that can be
// read (the client gets the first 100 and the total).
func holidayYears(prefix string) []string {
	var years []string
	for y := hol.MinYear; y <= hol.MaxYear; y++ {
		if s := strconv.Itoa(y); strings.HasPrefix(s, prefix) {
			years = append(years, s)
		}
	}
	return years
}

func registerHolidayResources(app *worker.App) {
	// A static resource: one URI, one JSON document.
	//docs:begin static
	app.ConfigureMcpResource("holidays://countries").
		WithName("holiday-countries").
		WithTitle("Holiday countries").
		WithDescription("The countries whose public holidays list_holidays and the holidays://{country}/{year} resources know.").
		WithMimeType("application/json").
		Handle(func(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) {
			data, err := holidayCountriesJSON()
			if err != nil {
				return nil, err
			}
			return worker.TextResource(data), nil
		})
	//docs:end static

	// A resource template: every URI it matches is read by the handler,
	// with the variables' values. Completions are a funcmcp feature (the
	// Azure Functions host does not offer them): a fixed list for the
	// country, a function for the year.
	//docs:begin template
	app.ConfigureMcpResource("holidays://{country}/{year}").
		WithName("holidays").
		WithTitle("Public holidays of a year").
		WithDescription("The public holidays of a country (GB, NO or US) in a year (1900 to 2199), as a JSON array in date order.").
		WithMimeType("application/json").
		WithCompletion("country", holidayCountries...).
		WithCompletionFunc("year", func(_ context.Context, cc *worker.CompletionContext) ([]string, error) {
			return holidayYears(cc.Value), nil
		}).
		Handle(readHolidays)
	//docs:end template
}

// holidayCountriesJSON is the holidays://countries document.
func holidayCountriesJSON() (string, error) {
	type country struct {
		Code string `json:"code"`
		Name string `json:"name"`
	}
	list := make([]country, 0, len(holidayCountries))
	for _, c := range holidayCountries {
		list = append(list, country{c, holidayCountryNames[c]})
	}
	data, err := json.Marshal(list)
	return string(data), err
}

// readHolidays reads holidays://{country}/{year}.
//
//docs:begin read
func readHolidays(_ context.Context, rc *worker.ResourceContext) (*worker.ResourceResult, error) {
	country := strings.ToUpper(rc.Variable("country"))
	if !slices.Contains(holidayCountries, country) {
		return nil, fmt.Errorf("%w: no holidays for country %q; use one of %s", worker.ErrResourceNotFound,
			rc.Variable("country"), strings.Join(holidayCountries, ", "))
	}
	year, err := strconv.Atoi(rc.Variable("year"))
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a year", worker.ErrResourceNotFound, rc.Variable("year"))
	}
	list, err := holidays(country, year)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", worker.ErrResourceNotFound, err)
	}
	data, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	return worker.TextResource(string(data)), nil
}

//docs:end read
