package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/worker"
)

// DayOffArgs are plan_days_off's arguments: a required country and an
// optional year (a typed prompt: arguments are the struct's string
// fields).
//
//docs:begin args
type DayOffArgs struct {
	Country string `json:"country" jsonschema:"ISO country code: GB, NO or US."`
	Year    string `json:"year,omitempty" jsonschema:"The year to plan; the current year when omitted."`
}

//docs:end args

func registerPrompts(app *worker.App) {
	//docs:begin register
	worker.AddPrompt(app, "plan_days_off", dayOffPrompt).
		WithTitle("Plan days off").
		WithDescription("Plan a year's days off around the public holidays of a country.").
		WithCompletion("country", holidayCountries...).
		WithCompletionFunc("year", func(_ context.Context, cc *worker.CompletionContext) ([]string, error) {
			return holidayYears(cc.Value), nil
		})
	//docs:end register
}

// dayOffPrompt embeds the year's holidays as a resource and asks for a
// plan around them.
//
//docs:begin handler
func dayOffPrompt(_ context.Context, _ *worker.PromptContext, in DayOffArgs) (*worker.PromptResult, error) {
	country := strings.ToUpper(strings.TrimSpace(in.Country))
	year := time.Now().UTC().Year()
	if in.Year != "" {
		y, err := strconv.Atoi(in.Year)
		if err != nil {
			return nil, fmt.Errorf("%w: year %q is not a number", worker.ErrInvalidParams, in.Year)
		}
		year = y
	}
	list, err := holidays(country, year)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", worker.ErrInvalidParams, err)
	}
	data, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	uri := fmt.Sprintf("holidays://%s/%d", country, year)
	return &worker.PromptResult{
		Description: fmt.Sprintf("Days off in %s, %d", holidayCountryNames[country], year),
		Messages: []worker.PromptMessage{
			worker.UserMessage(worker.EmbeddedResource(uri, "application/json", string(data))),
			worker.UserMessage(worker.Text(fmt.Sprintf(
				"These are the public holidays of %s in %d. Suggest which days to take off to get the longest "+
					"breaks for the fewest days of leave, and list the resulting breaks.", holidayCountryNames[country], year))),
		},
	}, nil
}

//docs:end handler
