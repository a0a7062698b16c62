module github.com/funcmcp/funcmcp/tests/bench/mcpgoserver

go 1.26.0

replace github.com/funcmcp/funcmcp => ../../..

require (
	github.com/funcmcp/funcmcp v0.0.0-00010101000000-000000000000
	github.com/mark3labs/mcp-go v1.2.1
)

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/text v0.43.0 // indirect
)
