package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hol "github.com/funcmcp/funcmcp/function-app-sample/holidays"
	"github.com/funcmcp/funcmcp/metadata"
	"github.com/funcmcp/funcmcp/worker"
)

func TestHolidayResources(t *testing.T) {
	countries, err := holidayCountriesJSON()
	require.NoError(t, err)
	assert.JSONEq(t, `[{"code":"GB","name":"United Kingdom (England and Wales bank holidays)"},{"code":"NO","name":"Norway"},{"code":"US","name":"United States (federal holidays)"}]`, countries)

	res, err := readHolidays(context.Background(), &worker.ResourceContext{Variables: map[string]string{"country": "no", "year": "2026"}})
	require.NoError(t, err)
	var list []Holiday
	require.NoError(t, json.Unmarshal([]byte(res.Text), &list))
	assert.Contains(t, list, Holiday{Date: "2026-05-17", Weekday: "Sunday", Name: "Constitution Day", LocalName: "Grunnlovsdag"})

	for vars, want := range map[[2]string]string{
		{"SE", "2026"}: `no holidays for country "SE"`,
		{"US", "x"}:    `"x" is not a year`,
		{"US", "1800"}: "between 1900 and 2199",
	} {
		_, err := readHolidays(context.Background(), &worker.ResourceContext{Variables: map[string]string{"country": vars[0], "year": vars[1]}})
		assert.ErrorIs(t, err, worker.ErrResourceNotFound)
		assert.ErrorContains(t, err, want)
	}
	assert.Equal(t, []string{"2030", "2031", "2032", "2033", "2034", "2035", "2036", "2037", "2038", "2039"}, holidayYears("203"))
	assert.Empty(t, holidayYears("22"))
}

// TestHolidayYearsAgree: the year completion offers every year the
// resource reads and the descriptions name, and no other.
func TestHolidayYearsAgree(t *testing.T) {
	all := holidayYears("")
	require.Len(t, all, hol.MaxYear-hol.MinYear+1)
	assert.Equal(t, strconv.Itoa(hol.MinYear), all[0])
	assert.Equal(t, strconv.Itoa(hol.MaxYear), all[len(all)-1])
	assert.Len(t, holidayYears("19"), 100)
	for _, y := range []int{hol.MinYear, hol.MaxYear} {
		_, err := hol.Compute("US", y)
		assert.NoError(t, err, "%d", y)
	}
	for _, y := range []int{hol.MinYear - 1, hol.MaxYear + 1} {
		_, err := hol.Compute("US", y)
		assert.Error(t, err, "%d", y)
	}
	span := fmt.Sprintf("%d to %d", hol.MinYear, hol.MaxYear)
	fns, err := newApp().Functions()
	require.NoError(t, err)
	var described int
	for _, fn := range fns {
		data, err := json.Marshal(fn)
		require.NoError(t, err)
		if strings.Contains(string(data), `"uri":"holidays://{country}/{year}"`) || strings.Contains(string(data), `"toolName":"list_holidays"`) {
			assert.Contains(t, string(data), span, fn.Name)
			described++
		}
	}
	assert.Equal(t, 2, described, "the template and list_holidays")
}

func TestDaysOffPrompt(t *testing.T) {
	res, err := dayOffPrompt(context.Background(), nil, DayOffArgs{Country: "gb", Year: "2026"})
	require.NoError(t, err)
	assert.Equal(t, "Days off in United Kingdom (England and Wales bank holidays), 2026", res.Description)
	require.Len(t, res.Messages, 2)
	var block struct {
		Type     string
		Resource struct{ URI, MimeType, Text string }
	}
	require.NoError(t, json.Unmarshal(res.Messages[0].Content, &block))
	assert.Equal(t, "resource", block.Type)
	assert.Equal(t, "holidays://GB/2026", block.Resource.URI)
	assert.Contains(t, block.Resource.Text, `"Boxing Day"`)

	_, err = dayOffPrompt(context.Background(), nil, DayOffArgs{Country: "GB", Year: "soon"})
	assert.ErrorIs(t, err, worker.ErrInvalidParams)
	_, err = dayOffPrompt(context.Background(), nil, DayOffArgs{Country: "FR", Year: "2026"})
	assert.ErrorIs(t, err, worker.ErrInvalidParams)
}

// TestSampleKindsServed reads the resources, the prompt and bar_chart's view
// through the sample's custom handler, as the Functions host invokes them.
func TestSampleKindsServed(t *testing.T) {
	srv := httptest.NewServer(newApp().Handler())
	defer srv.Close()
	post := func(function, context string, header http.Header) (int, metadata.InvocationResponse) {
		value, _ := json.Marshal(context)
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/"+function, strings.NewReader(fmt.Sprintf(`{"Data":{"context":%s}}`, value)))
		require.NoError(t, err)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out metadata.InvocationResponse
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	envelope := func(out metadata.InvocationResponse) string {
		var s string
		require.NoError(t, json.Unmarshal(out.ReturnValue, &s))
		return s
	}

	status, out := post("holidays_country_year", `{"uri":"holidays://US/2026"}`, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, envelope(out), `\"uri\":\"holidays://US/2026\",\"mimeType\":\"application/json\"`)
	assert.Contains(t, envelope(out), `Thanksgiving Day`)

	status, _ = post("holidays_country_year", `{"uri":"holidays://SE/2026"}`, nil)
	assert.Equal(t, http.StatusInternalServerError, status, "an unknown country is not found")

	status, out = post("plan_days_off", `{"name":"plan_days_off","arguments":{"country":"NO","year":"2026"}}`, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, envelope(out), `"type":"get_prompt_result"`)

	status, out = post("functions--mcpapp-bar_chart", `{"uri":"ui://bar_chart/view"}`, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, envelope(out), `text/html;profile=mcp-app`)
	assert.Contains(t, envelope(out), `ui/notifications/tool-result`)
	assert.Contains(t, envelope(out), `\"_meta\":{\"ui\":{\"prefersBorder\":true}}`)

	status, out = post("plan_days_off", `{"ref":{"type":"ref/prompt","name":"plan_days_off"},"argument":{"name":"year","value":"202"}}`,
		http.Header{metadata.HeaderMethod: {metadata.MethodComplete}})
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, `{"completion":{"values":["2020","2021","2022","2023","2024","2025","2026","2027","2028","2029"],"total":10,"hasMore":false}}`, envelope(out))
}
