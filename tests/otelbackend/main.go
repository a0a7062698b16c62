// Command otelbackend is the OpenTelemetry backend of the end-to-end tests:
// the OpenTelemetry Collector's own OTLP receiver (HTTP) feeding the
// collector's file exporter, built with the collector's Go API. It is a
// module of its own so that the product's go.mod does not depend on the
// collector.
//
//	otelbackend -listen 127.0.0.1:0 -file spans.json
//
// It prints "listening on http://HOST:PORT" once the receiver is up, and
// writes every batch of spans and metrics it receives to the file, one
// OTLP/JSON document a line, until SIGTERM or SIGINT.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "the address of the OTLP/HTTP receiver")
	file := flag.String("file", "", "the file the spans and metrics are written to (OTLP/JSON lines)")
	flag.Parse()
	if *file == "" {
		fmt.Fprintln(os.Stderr, "otelbackend: -file is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, *listen, *file); err != nil {
		fmt.Fprintf(os.Stderr, "otelbackend: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, listen, file string) error {
	// The receiver takes an address, not a listener: find a free port first
	// when asked for port 0.
	addr, err := freeAddr(listen)
	if err != nil {
		return err
	}
	host := componenttest.NewNopHost()

	ef := fileexporter.NewFactory()
	ecfg := ef.CreateDefaultConfig().(*fileexporter.Config)
	ecfg.Path = file
	ecfg.FormatType = "json"
	eset := exportertest.NewNopSettings(ef.Type())
	traces, err := ef.CreateTraces(ctx, eset, ecfg)
	if err != nil {
		return fmt.Errorf("making the trace exporter: %w", err)
	}
	metrics, err := ef.CreateMetrics(ctx, eset, ecfg)
	if err != nil {
		return fmt.Errorf("making the metric exporter: %w", err)
	}
	exporters := []component.Component{traces, metrics}

	rf := otlpreceiver.NewFactory()
	rcfg := rf.CreateDefaultConfig().(*otlpreceiver.Config)
	rcfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	rcfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = addr
	rset := receivertest.NewNopSettings(rf.Type())
	rt, err := rf.CreateTraces(ctx, rset, rcfg, traces)
	if err != nil {
		return fmt.Errorf("making the receiver: %w", err)
	}
	rm, err := rf.CreateMetrics(ctx, rset, rcfg, metrics)
	if err != nil {
		return fmt.Errorf("making the receiver: %w", err)
	}
	for _, c := range exporters {
		if err := c.Start(ctx, host); err != nil {
			return fmt.Errorf("starting the exporter: %w", err)
		}
	}
	for _, c := range []component.Component{rt, rm} {
		if err := c.Start(ctx, host); err != nil {
			return fmt.Errorf("starting the receiver: %w", err)
		}
	}
	fmt.Printf("listening on http://%s\n", addr)
	<-ctx.Done()
	var errs []error
	for _, c := range []component.Component{rt, rm, traces, metrics} {
		errs = append(errs, c.Shutdown(context.Background()))
	}
	return errors.Join(errs...)
}

func freeAddr(listen string) (string, error) {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
