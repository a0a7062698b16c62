// Package holidays computes the sample's public holidays: the computation
// behind list_holidays, the holidays://{country}/{year} resources and the
// plan_days_off prompt, importable so that a benchmark can serve the very
// same work from another MCP server.
package holidays

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Holiday is one public holiday.
type Holiday struct {
	Date      string `json:"date" jsonschema:"The date, YYYY-MM-DD."`
	Weekday   string `json:"weekday" jsonschema:"English day of the week."`
	Name      string `json:"name" jsonschema:"English name."`
	LocalName string `json:"local_name,omitempty" jsonschema:"Name in the country's language, when it differs."`
}

// Countries lists the supported country codes.
var Countries = []string{"GB", "NO", "US"}

// CountryNames names the supported countries.
var CountryNames = map[string]string{
	"GB": "United Kingdom (England and Wales bank holidays)",
	"NO": "Norway",
	"US": "United States (federal holidays)",
}

// The years Compute knows: the rules it applies hold from MinYear to
// MaxYear.
const (
	MinYear = 1900
	MaxYear = 2199
)

// Compute returns the public holidays of a country (see [Countries]) in a
// year from MinYear to MaxYear, in date order.
func Compute(country string, year int) ([]Holiday, error) {
	if year < MinYear || year > MaxYear {
		return nil, fmt.Errorf("year must be between %d and %d, not %d", MinYear, MaxYear, year)
	}
	easter := EasterSunday(year)
	fixed := func(m time.Month, d int) time.Time { return time.Date(year, m, d, 0, 0, 0, 0, time.UTC) }
	var list []Holiday
	add := func(t time.Time, name, local string) {
		list = append(list, Holiday{Date: t.Format(time.DateOnly), Weekday: t.Weekday().String(), Name: name, LocalName: local})
	}
	switch strings.ToUpper(strings.TrimSpace(country)) {
	case "US":
		add(fixed(time.January, 1), "New Year's Day", "")
		add(nthWeekday(year, time.January, time.Monday, 3), "Martin Luther King Jr. Day", "")
		add(nthWeekday(year, time.February, time.Monday, 3), "Washington's Birthday", "")
		add(nthWeekday(year, time.May, time.Monday, -1), "Memorial Day", "")
		if year >= 2021 {
			add(fixed(time.June, 19), "Juneteenth National Independence Day", "")
		}
		add(fixed(time.July, 4), "Independence Day", "")
		add(nthWeekday(year, time.September, time.Monday, 1), "Labor Day", "")
		add(nthWeekday(year, time.October, time.Monday, 2), "Columbus Day", "")
		add(fixed(time.November, 11), "Veterans Day", "")
		add(nthWeekday(year, time.November, time.Thursday, 4), "Thanksgiving Day", "")
		add(fixed(time.December, 25), "Christmas Day", "")
	case "GB":
		add(fixed(time.January, 1), "New Year's Day", "")
		add(easter.AddDate(0, 0, -2), "Good Friday", "")
		add(easter.AddDate(0, 0, 1), "Easter Monday", "")
		add(nthWeekday(year, time.May, time.Monday, 1), "Early May bank holiday", "")
		add(nthWeekday(year, time.May, time.Monday, -1), "Spring bank holiday", "")
		add(nthWeekday(year, time.August, time.Monday, -1), "Summer bank holiday", "")
		add(fixed(time.December, 25), "Christmas Day", "")
		add(fixed(time.December, 26), "Boxing Day", "")
	case "NO":
		add(fixed(time.January, 1), "New Year's Day", "Første nyttårsdag")
		add(easter.AddDate(0, 0, -3), "Maundy Thursday", "Skjærtorsdag")
		add(easter.AddDate(0, 0, -2), "Good Friday", "Langfredag")
		add(easter, "Easter Sunday", "Første påskedag")
		add(easter.AddDate(0, 0, 1), "Easter Monday", "Andre påskedag")
		add(fixed(time.May, 1), "Labour Day", "Arbeidernes dag")
		add(fixed(time.May, 17), "Constitution Day", "Grunnlovsdag")
		add(easter.AddDate(0, 0, 39), "Ascension Day", "Kristi himmelfartsdag")
		add(easter.AddDate(0, 0, 49), "Whit Sunday", "Første pinsedag")
		add(easter.AddDate(0, 0, 50), "Whit Monday", "Andre pinsedag")
		add(fixed(time.December, 25), "Christmas Day", "Første juledag")
		add(fixed(time.December, 26), "Boxing Day", "Andre juledag")
	default:
		return nil, fmt.Errorf("country %q is not supported; use one of %s", country, strings.Join(Countries, ", "))
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Date < list[j].Date })
	return list, nil
}

// EasterSunday returns the Gregorian Easter Sunday of a year (the anonymous
// Gregorian algorithm, also known as Meeus/Jones/Butcher).
func EasterSunday(year int) time.Time {
	a := year % 19
	b, c := year/100, year%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
}

// nthWeekday returns the n-th given weekday of a month (n = -1: the last one).
func nthWeekday(year int, month time.Month, wd time.Weekday, n int) time.Time {
	if n < 0 {
		last := time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC)
		return last.AddDate(0, 0, -((int(last.Weekday()) - int(wd) + 7) % 7))
	}
	first := time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
	offset := (int(wd) - int(first.Weekday()) + 7) % 7
	return first.AddDate(0, 0, offset+7*(n-1))
}
