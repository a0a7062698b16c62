// Package weather computes the sample's deterministic weather forecasts: the
// computation behind get_weather, importable so that a benchmark can serve
// the very same tool from another MCP server.
package weather

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"
)

// Conditions are the weather conditions, as the output schema's "condition" enum lists them.
var Conditions = []string{"sunny", "partly_cloudy", "cloudy", "fog", "rain", "snow", "thunderstorm"}

// WindDirections are the compass points of the schema's wind direction enum.
var WindDirections = []string{"N", "NE", "E", "SE", "S", "SW", "W", "NW"}

// Forecast is get_weather's structured result.
type Forecast struct {
	City      string    `json:"city"`
	Units     string    `json:"units"`
	StartDate string    `json:"startDate"`
	Current   Current   `json:"current"`
	Daily     []DayCast `json:"daily"`
	Summary   string    `json:"summary,omitempty"`
}

// Current is the weather right now.
type Current struct {
	Temperature float64 `json:"temperature"`
	FeelsLike   float64 `json:"feelsLike"`
	Humidity    int     `json:"humidity"`
	Condition   string  `json:"condition"`
	Wind        Wind    `json:"wind"`
}

// Wind is a wind speed and the direction it blows from.
type Wind struct {
	Speed     float64 `json:"speed"`
	Direction string  `json:"direction"`
}

// DayCast is one forecast day.
type DayCast struct {
	Date                string  `json:"date"`
	High                float64 `json:"high"`
	Low                 float64 `json:"low"`
	Condition           string  `json:"condition"`
	PrecipitationChance int     `json:"precipitationChance"`
}

// Compute computes a weather forecast from the city name and the date alone:
// the same arguments always give the same forecast.
func Compute(city, units string, start time.Time, days int) (*Forecast, error) {
	city = strings.TrimSpace(city)
	if city == "" {
		return nil, errors.New("city must not be empty")
	}
	switch units {
	case "":
		units = "metric"
	case "metric", "imperial":
	default:
		return nil, fmt.Errorf("units must be \"metric\" or \"imperial\", not %q", units)
	}
	if days == 0 {
		days = 3
	}
	if days < 1 || days > 7 {
		return nil, fmt.Errorf("days must be between 1 and 7, not %d", days)
	}
	start = time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)
	key := strings.ToLower(city)
	cityHash := hash64(key)
	// Every city gets its own climate: a yearly mean between -4 and 20 °C and
	// a seasonal swing between 4 and 13 °C.
	mean := float64(cityHash%2400)/100 - 4
	swing := 4 + float64((cityHash>>12)%10)
	wetness := int((cityHash >> 20) % 60) // 0..59, how rainy the city is

	f := &Forecast{City: city, Units: units, StartDate: start.Format(time.DateOnly)}
	for i := range days {
		d := start.AddDate(0, 0, i)
		h := hash64(key + "|" + d.Format(time.DateOnly))
		seasonal := -math.Cos(2*math.Pi*float64(d.YearDay()-15)/365) * swing
		noise := float64(h%600)/100 - 3 // -3..+3
		high := mean + seasonal + noise + 4
		low := high - 5 - float64((h>>10)%6)
		precip := clamp(wetness+int((h>>16)%50)-10, 0, 100)
		f.Daily = append(f.Daily, DayCast{
			Date:                d.Format(time.DateOnly),
			High:                round1(temperature(high, units)),
			Low:                 round1(temperature(low, units)),
			Condition:           condition(high, precip, h),
			PrecipitationChance: precip,
		})
		if i == 0 {
			now := (high + low) / 2
			windKmh := float64((h>>24)%450) / 10
			humidity := clamp(40+precip/2+int((h>>32)%15), 0, 100)
			f.Current = Current{
				Temperature: round1(temperature(now, units)),
				FeelsLike:   round1(temperature(now-windKmh/10, units)),
				Humidity:    humidity,
				Condition:   f.Daily[0].Condition,
				Wind:        Wind{Speed: round1(speed(windKmh, units)), Direction: WindDirections[(h>>40)%8]},
			}
		}
	}
	f.Summary = fmt.Sprintf("%s: %s, %.1f°%s now; high %.1f, low %.1f today.",
		city, strings.ReplaceAll(f.Current.Condition, "_", " "), f.Current.Temperature,
		map[string]string{"metric": "C", "imperial": "F"}[units], f.Daily[0].High, f.Daily[0].Low)
	return f, nil
}

func condition(highC float64, precip int, h uint64) string {
	switch {
	case precip >= 70 && highC <= 1:
		return "snow"
	case precip >= 85 && highC >= 18:
		return "thunderstorm"
	case precip >= 60:
		return "rain"
	case precip >= 45 && h%5 == 0:
		return "fog"
	case precip >= 35:
		return "cloudy"
	case precip >= 15:
		return "partly_cloudy"
	default:
		return "sunny"
	}
}

func temperature(celsius float64, units string) float64 {
	if units == "imperial" {
		return celsius*9/5 + 32
	}
	return celsius
}

func speed(kmh float64, units string) float64 {
	if units == "imperial" {
		return kmh / 1.609344
	}
	return kmh
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }
