package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hol "github.com/funcmcp/funcmcp/function-app-sample/holidays"
)

func TestRoman(t *testing.T) {
	tests := []struct {
		n       int
		want    string
		wantErr string
	}{
		{n: 1, want: "I"},
		{n: 4, want: "IV"},
		{n: 9, want: "IX"},
		{n: 14, want: "XIV"},
		{n: 1994, want: "MCMXCIV"},
		{n: 2026, want: "MMXXVI"},
		{n: 3999, want: "MMMCMXCIX"},
		{n: 0, wantErr: "between 1 and 3999, not 0"},
		{n: 4000, wantErr: "between 1 and 3999, not 4000"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			got, err := roman(tt.n)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestEasterSunday(t *testing.T) {
	tests := map[int]string{
		1961: "1961-04-02", 2000: "2000-04-23", 2019: "2019-04-21", 2024: "2024-03-31",
		2025: "2025-04-20", 2026: "2026-04-05", 2038: "2038-04-25",
	}
	for year, want := range tests {
		assert.Equal(t, want, hol.EasterSunday(year).Format(time.DateOnly), "year %d", year)
	}
}

func TestHolidays(t *testing.T) {
	tests := []struct {
		name      string
		country   string
		year      int
		wantCount int
		wantHas   []string // "date name"
		wantErr   string
	}{
		{name: "US 2026", country: "US", year: 2026, wantCount: 11, wantHas: []string{
			"2026-01-19 Martin Luther King Jr. Day", "2026-05-25 Memorial Day",
			"2026-09-07 Labor Day", "2026-11-26 Thanksgiving Day",
		}},
		{name: "US before Juneteenth", country: "us", year: 2020, wantCount: 10},
		{name: "GB 2026", country: "GB", year: 2026, wantCount: 8, wantHas: []string{
			"2026-04-03 Good Friday", "2026-04-06 Easter Monday", "2026-05-04 Early May bank holiday",
			"2026-05-25 Spring bank holiday", "2026-08-31 Summer bank holiday",
		}},
		{name: "NO 2026", country: " no ", year: 2026, wantCount: 12, wantHas: []string{
			"2026-04-02 Maundy Thursday", "2026-05-14 Ascension Day", "2026-05-17 Constitution Day",
			"2026-05-25 Whit Monday",
		}},
		{name: "unknown country", country: "FR", year: 2026, wantErr: `country "FR" is not supported`},
		{name: "year too small", country: "US", year: 1800, wantErr: "year must be between 1900 and 2199"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := holidays(tt.country, tt.year)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Len(t, got, tt.wantCount)
			var have []string
			for _, h := range got {
				have = append(have, h.Date+" "+h.Name)
				d, err := time.Parse(time.DateOnly, h.Date)
				require.NoError(t, err)
				assert.Equal(t, d.Weekday().String(), h.Weekday, h.Name)
			}
			assert.True(t, slices.IsSorted(have), "holidays are in date order")
			for _, w := range tt.wantHas {
				assert.Contains(t, have, w)
			}
		})
	}
}

func TestPrimesBetween(t *testing.T) {
	tests := []struct {
		name     string
		from, to int
		want     []int
		wantErr  string
	}{
		{name: "up to 30", to: 30, want: []int{2, 3, 5, 7, 11, 13, 17, 19, 23, 29}},
		{name: "window", from: 90, to: 110, want: []int{97, 101, 103, 107, 109}},
		{name: "none", from: 24, to: 28, want: []int{}},
		{name: "below two", from: -5, to: 1, want: []int{}},
		{name: "bounds inclusive", from: 7, to: 7, want: []int{7}},
		{name: "reversed", from: 10, to: 5, wantErr: "must not be greater than"},
		{name: "too large", to: 2_000_000, wantErr: "at most 1000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := primesBetween(tt.from, tt.to)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestMortgage(t *testing.T) {
	tests := []struct {
		name        string
		in          MortgageInput
		wantPayment float64
		wantMonths  int
		wantYears   int
		wantErr     []string
	}{
		{name: "30 years at 4.5%", in: MortgageInput{Principal: 350000, AnnualRatePercent: 4.5, Years: 30},
			wantPayment: 1773.40, wantMonths: 360, wantYears: 30},
		{name: "no interest", in: MortgageInput{Principal: 12000, Years: 1},
			wantPayment: 1000, wantMonths: 12, wantYears: 1},
		{name: "extra payments shorten the loan", in: MortgageInput{Principal: 200000, AnnualRatePercent: 6, Years: 30, ExtraMonthlyPayment: 500},
			wantPayment: 1199.10, wantMonths: 179, wantYears: 15},
		{name: "all bad", in: MortgageInput{Principal: -1, AnnualRatePercent: 120, Years: 0, ExtraMonthlyPayment: -3},
			wantErr: []string{"principal must be", "annual_rate_percent must be", "years must be", "extra_monthly_payment must"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mortgage(tt.in)
			if tt.wantErr != nil {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					assert.ErrorContains(t, err, w)
				}
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, tt.wantPayment, got.MonthlyPayment, 0.001)
			assert.Equal(t, tt.wantMonths, got.Months)
			require.Len(t, got.Schedule, tt.wantYears)
			last := got.Schedule[len(got.Schedule)-1]
			assert.Zero(t, last.Balance, "the loan is repaid")
			var principal float64
			for _, y := range got.Schedule {
				principal += y.PrincipalPaid
			}
			assert.InDelta(t, tt.in.Principal, principal, 0.05, "all principal is paid back")
			assert.InDelta(t, got.TotalPaid, tt.in.Principal+got.TotalInterest, 0.05)
		})
	}
}

func TestForecast(t *testing.T) {
	day := time.Date(2026, time.May, 17, 15, 4, 5, 0, time.UTC)
	oslo, err := forecast("Oslo", "", day, 0)
	require.NoError(t, err)
	again, err := forecast(" Oslo ", "metric", day, 3)
	require.NoError(t, err)
	assert.Equal(t, oslo, again, "the same arguments give the same forecast")
	assert.Equal(t, "metric", oslo.Units)
	assert.Equal(t, "2026-05-17", oslo.StartDate)
	require.Len(t, oslo.Daily, 3)
	assert.Equal(t, []string{"2026-05-17", "2026-05-18", "2026-05-19"},
		[]string{oslo.Daily[0].Date, oslo.Daily[1].Date, oslo.Daily[2].Date})

	imperial, err := forecast("Oslo", "imperial", day, 3)
	require.NoError(t, err)
	for i := range oslo.Daily {
		assert.InDelta(t, oslo.Daily[i].High*9/5+32, imperial.Daily[i].High, 0.2)
	}

	lima, err := forecast("Lima", "metric", day, 3)
	require.NoError(t, err)
	assert.NotEqual(t, oslo.Daily, lima.Daily, "different cities get different weather")

	// Every value stays inside the output schema's enums and ranges.
	for _, city := range []string{"Oslo", "Lima", "Tromsø", "Cairo", "Reykjavík", "Singapore", "Buenos Aires", "Anchorage"} {
		for m := range 12 {
			f, err := forecast(city, "metric", time.Date(2026, time.Month(m+1), 3, 0, 0, 0, 0, time.UTC), 7)
			require.NoError(t, err)
			assert.Contains(t, conditions, f.Current.Condition)
			assert.Contains(t, windDirections, f.Current.Wind.Direction)
			assert.GreaterOrEqual(t, f.Current.Wind.Speed, 0.0)
			assert.True(t, f.Current.Humidity >= 0 && f.Current.Humidity <= 100)
			for _, d := range f.Daily {
				assert.Contains(t, conditions, d.Condition)
				assert.LessOrEqual(t, d.Low, d.High)
				assert.True(t, d.PrecipitationChance >= 0 && d.PrecipitationChance <= 100)
			}
		}
	}

	for _, bad := range []struct {
		city, units string
		days        int
		want        string
	}{
		{city: " ", want: "city must not be empty"},
		{city: "Oslo", units: "kelvin", want: `units must be "metric" or "imperial"`},
		{city: "Oslo", days: 8, want: "days must be between 1 and 7"},
	} {
		_, err := forecast(bad.city, bad.units, day, bad.days)
		assert.ErrorContains(t, err, bad.want)
	}
}

func TestWeatherSchemaIsCompactable(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, []byte(weatherSchema)))
	var root map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &root))
	assert.Equal(t, "object", root["type"])
	// Every field of Forecast is a declared property, and nothing else is.
	props := root["properties"].(map[string]any)
	data, err := json.Marshal(Forecast{Summary: "x"})
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(data, &fields))
	for k := range fields {
		assert.Contains(t, props, k)
	}
	assert.Len(t, props, len(fields))
}

func TestBarChart(t *testing.T) {
	data, err := barChart([]float64{1, 4, 2}, "green")
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, barGap+3*(barWidth+barGap), img.Bounds().Dx())
	assert.Equal(t, chartHeight, img.Bounds().Dy())
	// The tallest bar reaches near the top; the shortest does not.
	r, g, b, _ := img.At(barGap+(barWidth+barGap)+1, barGap+1).RGBA()
	assert.Equal(t, [3]uint32{0x2c, 0xa0, 0x2c}, [3]uint32{r >> 8, g >> 8, b >> 8})
	r, g, b, _ = img.At(barGap+1, barGap+1).RGBA()
	assert.Equal(t, [3]uint32{0xff, 0xff, 0xff}, [3]uint32{r >> 8, g >> 8, b >> 8})

	for _, bad := range []struct {
		values []float64
		color  string
		want   string
	}{
		{values: nil, want: "values must hold 1 to 24 numbers"},
		{values: make([]float64, 25), want: "values must hold 1 to 24 numbers, not 25"},
		{values: []float64{1, -2}, want: "values[1] must be a non-negative number"},
		{values: []float64{1}, color: "pink", want: `color "pink" is not one of`},
	} {
		_, err := barChart(bad.values, bad.color)
		assert.ErrorContains(t, err, bad.want)
	}
}

func Example_roman() {
	for _, n := range []int{7, 49, 2026} {
		s, _ := roman(n)
		fmt.Println(n, strings.ToLower(s), s)
	}
	// Output:
	// 7 vii VII
	// 49 xlix XLIX
	// 2026 mmxxvi MMXXVI
}

func TestFibonacci(t *testing.T) {
	got, err := fibonacci(10)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1, 1, 2, 3, 5, 8, 13, 21, 34}, got)
	got, err = fibonacci(maxFibonacciTerms)
	require.NoError(t, err)
	assert.Equal(t, int64(117669030460994), got[maxFibonacciTerms-1], "F(69)")
	assert.Less(t, got[maxFibonacciTerms-1], int64(1)<<53)
	for _, n := range []int{0, -1, maxFibonacciTerms + 1} {
		_, err := fibonacci(n)
		assert.ErrorContains(t, err, "count must be between 1 and 70", n)
	}
}
