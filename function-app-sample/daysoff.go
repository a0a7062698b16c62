package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/worker"
)

// BookDaysOffInput is book_days_off's arguments.
type BookDaysOffInput struct {
	Country string `json:"country" jsonschema:"ISO country code whose public holidays apply: GB, NO or US."`
	From    string `json:"from" jsonschema:"First day off, YYYY-MM-DD."`
	To      string `json:"to" jsonschema:"Last day off, YYYY-MM-DD, at most 60 days after from."`
}

// DaysOffBooking is book_days_off's result.
type DaysOffBooking struct {
	Status    string   `json:"status" jsonschema:"booked, declined (the user said no), cancelled (the user dismissed the question) or unconfirmed (the client cannot ask the user)."`
	Country   string   `json:"country"`
	From      string   `json:"from"`
	To        string   `json:"to"`
	LeaveDays int      `json:"leave_days" jsonschema:"Days of leave the period takes: its weekdays that are not public holidays."`
	Holidays  []string `json:"holidays" jsonschema:"The public holidays in the period, as \"YYYY-MM-DD name\"."`
	Note      string   `json:"note,omitempty" jsonschema:"The user's note for the booking, when they wrote one."`
	Message   string   `json:"message" jsonschema:"What happened, in a sentence."`
}

// maxDaysOff bounds the period book_days_off books.
const maxDaysOff = 60

// confirmDaysOffSchema is the form the user fills in: a yes/no (ticked by
// default) and an optional note.
var confirmDaysOffSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"confirm":{"type":"boolean","title":"Book these days off","default":true},` +
	`"note":{"type":"string","title":"Note for your team","maxLength":200}},` +
	`"required":["confirm"]}`)

func registerDaysOff(app *worker.App) {
	// A tool that asks the user (elicitation) before it acts, and still
	// answers usefully when the client cannot ask.
	worker.AddTool(app, "book_days_off", bookDaysOff).
		WithTitle("Book days off").
		WithDescription("Count the days of leave a period off takes in a country (weekdays that are not public holidays) " +
			"and ask the user to confirm the booking. Without a client that can ask the user, the booking is left unconfirmed.")
}

func bookDaysOff(ctx context.Context, tc *worker.ToolContext, in BookDaysOffInput) (*worker.Result, DaysOffBooking, error) {
	// Everything before the first question runs again when the client
	// answers on MCP 2026-07-28: it only computes.
	b, err := planDaysOff(in)
	if err != nil {
		return nil, DaysOffBooking{}, err
	}
	question := fmt.Sprintf("Book %d days of leave for %s to %s (%s)?", b.LeaveDays, b.From, b.To, holidayCountryNames[b.Country])
	//docs:begin elicit
	answer, err := tc.Elicit(ctx, question, confirmDaysOffSchema, worker.InputKey("confirm_days_off"))
	var missing *worker.CapabilityError
	switch {
	case errors.As(err, &missing), errors.Is(err, worker.ErrNotSupported):
		b.Status, b.Message = "unconfirmed", "Not booked: this client cannot ask you to confirm. Book it yourself: "+question
		return nil, b, nil
	case err != nil: // ErrInputRequired (returned as is), the client's error, the time limit
		return nil, DaysOffBooking{}, err
	}
	switch confirmed, _ := answer.Content["confirm"].(bool); {
	case answer.Action == "accept" && confirmed:
		b.Status, b.Message = "booked", fmt.Sprintf("Booked %d days of leave.", b.LeaveDays)
		b.Note, _ = answer.Content["note"].(string)
	case answer.Action == "cancel":
		b.Status, b.Message = "cancelled", "Not booked: the question was dismissed."
	default: // declined, or accepted without the box ticked
		b.Status, b.Message = "declined", "Not booked: you said no."
	}
	//docs:end elicit
	return nil, b, nil
}

// planDaysOff checks the period and counts its days of leave.
func planDaysOff(in BookDaysOffInput) (DaysOffBooking, error) {
	country := strings.ToUpper(strings.TrimSpace(in.Country))
	from, errFrom := time.Parse(time.DateOnly, in.From)
	to, errTo := time.Parse(time.DateOnly, in.To)
	if err := errors.Join(errFrom, errTo); err != nil {
		return DaysOffBooking{}, fmt.Errorf("from and to must be dates, YYYY-MM-DD: %w", err)
	}
	if to.Before(from) || to.Sub(from) > (maxDaysOff-1)*24*time.Hour {
		return DaysOffBooking{}, fmt.Errorf("the period must run forwards, %d days at most: %s to %s", maxDaysOff, in.From, in.To)
	}
	names := map[string]string{}
	for y := from.Year(); y <= to.Year(); y++ {
		list, err := holidays(country, y)
		if err != nil {
			return DaysOffBooking{}, err
		}
		for _, h := range list {
			names[h.Date] = h.Name
		}
	}
	b := DaysOffBooking{Country: country, From: in.From, To: in.To, Holidays: []string{}}
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		date := d.Format(time.DateOnly)
		if name, ok := names[date]; ok {
			b.Holidays = append(b.Holidays, date+" "+name)
			continue
		}
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			b.LeaveDays++
		}
	}
	return b, nil
}
