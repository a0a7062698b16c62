package main

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/funcmcp/funcmcp/worker"
)

// MortgageInput is mortgage_payment's arguments; its JSON Schema is inferred
// from the struct.
//
//docs:begin types
type MortgageInput struct {
	Principal           float64 `json:"principal" jsonschema:"Amount borrowed, in currency units (e.g. 350000)."`
	AnnualRatePercent   float64 `json:"annual_rate_percent" jsonschema:"Nominal yearly interest rate in percent (e.g. 4.5)."`
	Years               int     `json:"years" jsonschema:"Loan term in whole years, 1 to 50."`
	ExtraMonthlyPayment float64 `json:"extra_monthly_payment,omitempty" jsonschema:"Optional extra amount paid every month on top of the required payment."`
}

// MortgagePayment is mortgage_payment's structured result; its output schema
// is inferred from the struct.
type MortgagePayment struct {
	MonthlyPayment float64       `json:"monthly_payment" jsonschema:"Required monthly payment, rounded to cents."`
	Months         int           `json:"months" jsonschema:"Number of payments until the loan is repaid (fewer than the term with extra payments)."`
	TotalPaid      float64       `json:"total_paid" jsonschema:"Sum of all payments."`
	TotalInterest  float64       `json:"total_interest" jsonschema:"Sum of all interest paid."`
	Schedule       []YearSummary `json:"schedule" jsonschema:"Amortization summary per loan year."`
}

//docs:end types

// YearSummary is one loan year of the amortization schedule.
type YearSummary struct {
	Year          int     `json:"year" jsonschema:"Loan year, starting at 1."`
	PrincipalPaid float64 `json:"principal_paid"`
	InterestPaid  float64 `json:"interest_paid"`
	Balance       float64 `json:"balance" jsonschema:"Balance left at the end of the year."`
}

func registerMortgage(app *worker.App) {
	//docs:begin register
	worker.AddTool(app, "mortgage_payment", func(_ context.Context, _ *worker.ToolContext, in MortgageInput) (*worker.Result, MortgagePayment, error) {
		p, err := mortgage(in)
		return nil, p, err
	}).
		WithTitle("Mortgage calculator").
		WithDescription("Compute the monthly payment of a fixed-rate, monthly-amortizing loan, " +
			"the total interest, and a year-by-year amortization schedule. An optional extra " +
			"monthly payment shortens the loan.")
	//docs:end register
}

// mortgage amortizes a fixed-rate loan month by month.
func mortgage(in MortgageInput) (MortgagePayment, error) {
	var errs []error
	if in.Principal <= 0 || math.IsInf(in.Principal, 0) || math.IsNaN(in.Principal) {
		errs = append(errs, fmt.Errorf("principal must be a positive amount, not %v", in.Principal))
	}
	if in.AnnualRatePercent < 0 || in.AnnualRatePercent > 100 {
		errs = append(errs, fmt.Errorf("annual_rate_percent must be between 0 and 100, not %v", in.AnnualRatePercent))
	}
	if in.Years < 1 || in.Years > 50 {
		errs = append(errs, fmt.Errorf("years must be between 1 and 50, not %d", in.Years))
	}
	if in.ExtraMonthlyPayment < 0 {
		errs = append(errs, fmt.Errorf("extra_monthly_payment must not be negative, not %v", in.ExtraMonthlyPayment))
	}
	if err := errors.Join(errs...); err != nil {
		return MortgagePayment{}, err
	}
	n := in.Years * 12
	r := in.AnnualRatePercent / 100 / 12
	payment := in.Principal / float64(n)
	if r > 0 {
		payment = in.Principal * r / (1 - math.Pow(1+r, -float64(n)))
	}
	payment = cents(payment)

	out := MortgagePayment{MonthlyPayment: payment, Schedule: []YearSummary{}}
	balance := in.Principal
	var year YearSummary
	for month := 1; balance > 0.005 && month <= n; month++ {
		interest := cents(balance * r)
		principal := math.Min(payment+in.ExtraMonthlyPayment-interest, balance)
		if month == n { // the last payment clears rounding leftovers
			principal = balance
		}
		balance -= principal
		out.Months++
		out.TotalPaid += principal + interest
		out.TotalInterest += interest
		year.PrincipalPaid += principal
		year.InterestPaid += interest
		if month%12 == 0 || balance <= 0.005 || month == n {
			year.Year = (month + 11) / 12
			year.PrincipalPaid, year.InterestPaid = cents(year.PrincipalPaid), cents(year.InterestPaid)
			year.Balance = cents(math.Max(balance, 0))
			out.Schedule = append(out.Schedule, year)
			year = YearSummary{}
		}
	}
	out.TotalPaid, out.TotalInterest = cents(out.TotalPaid), cents(out.TotalInterest)
	return out, nil
}

func cents(v float64) float64 { return math.Round(v*100) / 100 }
