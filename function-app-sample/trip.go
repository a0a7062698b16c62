package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/worker"
)

// TripInput is suggest_trip's arguments.
type TripInput struct {
	Country   string `json:"country" jsonschema:"ISO country code: GB, NO or US."`
	Year      int    `json:"year" jsonschema:"Calendar year, 1900 to 2199."`
	Interests string `json:"interests,omitempty" jsonschema:"What the traveller enjoys, e.g. hiking and old towns."`
}

// TripSuggestion is suggest_trip's result.
type TripSuggestion struct {
	Country    string    `json:"country"`
	Break      LongBreak `json:"break" jsonschema:"The year's longest run of days off around a public holiday."`
	Suggestion string    `json:"suggestion" jsonschema:"What to do with the break."`
	Source     string    `json:"source" jsonschema:"model (the client's model wrote the suggestion) or built-in."`
	Model      string    `json:"model,omitempty" jsonschema:"The model that wrote the suggestion."`
	Note       string    `json:"note,omitempty" jsonschema:"Why the suggestion is built-in, when it is."`
}

// LongBreak is a run of consecutive days off: weekends and public holidays.
type LongBreak struct {
	From     string   `json:"from" jsonschema:"First day off, YYYY-MM-DD."`
	To       string   `json:"to" jsonschema:"Last day off, YYYY-MM-DD."`
	Days     int      `json:"days"`
	Holidays []string `json:"holidays" jsonschema:"The public holidays in it."`
}

func registerTrip(app *worker.App) {
	// A tool that asks the client's model (sampling), with a plain answer
	// of its own when it cannot.
	worker.AddTool(app, "suggest_trip", suggestTrip).
		WithTitle("Suggest a trip").
		WithDescription("Find the longest break of a year around the public holidays of a country and ask the " +
			"client's model for a trip to fill it. Without a client that offers a model, the suggestion is a built-in one.")
}

func suggestTrip(ctx context.Context, tc *worker.ToolContext, in TripInput) (*worker.Result, TripSuggestion, error) {
	country := strings.ToUpper(strings.TrimSpace(in.Country))
	br, err := longestBreak(country, in.Year)
	if err != nil {
		return nil, TripSuggestion{}, err
	}
	out := TripSuggestion{Country: country, Break: br}
	interests := in.Interests
	if interests == "" {
		interests = "a bit of everything"
	}
	//docs:begin sample
	msg, err := tc.CreateMessage(ctx, &worker.CreateMessageParams{
		SystemPrompt: "You are a travel planner. Answer in at most three sentences.",
		Messages: []worker.SamplingMessage{{Role: "user", Content: worker.Text(fmt.Sprintf(
			"Suggest a trip within %s for the %d days off from %s to %s (%s). The traveller enjoys %s.",
			holidayCountryNames[country], br.Days, br.From, br.To, strings.Join(br.Holidays, ", "), interests))}},
		MaxTokens: 300,
	})
	var missing *worker.CapabilityError
	var refused *worker.ClientError
	switch {
	case errors.As(err, &missing), errors.Is(err, worker.ErrNotSupported), errors.As(err, &refused):
		out.Source, out.Note = "built-in", fmt.Sprintf("the client's model could not be asked: %v", err)
		out.Suggestion = fmt.Sprintf("Spend the %d days from %s to %s somewhere new in %s: enjoy %s.",
			br.Days, br.From, br.To, holidayCountryNames[country], interests)
	case err != nil: // ErrInputRequired (returned as is), the time limit, cancellation
		return nil, TripSuggestion{}, err
	default:
		out.Source, out.Model, out.Suggestion = "model", msg.Model, msg.Text()
	}
	//docs:end sample
	return nil, out, nil
}

// longestBreak is the longest run of days off (weekends and public
// holidays) of a year that holds at least one public holiday; the earliest
// of the longest.
func longestBreak(country string, year int) (LongBreak, error) {
	list, err := holidays(country, year)
	if err != nil {
		return LongBreak{}, err
	}
	names := make(map[string]string, len(list))
	for _, h := range list {
		names[h.Date] = h.Name
	}
	var best, run LongBreak
	end := time.Date(year+1, time.January, 1, 0, 0, 0, 0, time.UTC)
	for d := time.Date(year, time.January, 1, 0, 0, 0, 0, time.UTC); !d.After(end); d = d.AddDate(0, 0, 1) {
		date := d.Format(time.DateOnly)
		name, holiday := names[date]
		if d.Before(end) && (holiday || d.Weekday() == time.Saturday || d.Weekday() == time.Sunday) {
			if run.Days == 0 {
				run = LongBreak{From: date, Holidays: []string{}}
			}
			run.To, run.Days = date, run.Days+1
			if holiday {
				run.Holidays = append(run.Holidays, name)
			}
			continue
		}
		if len(run.Holidays) > 0 && run.Days > best.Days {
			best = run
		}
		run = LongBreak{}
	}
	return best, nil
}
