//go:build race

package oauth

const raceEnabled = true
