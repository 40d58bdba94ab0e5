module github.com/fifobridge/fifobridge/bench

go 1.26.0

require (
	github.com/fifobridge/fifobridge v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.49.0
)

require (
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace github.com/fifobridge/fifobridge => ../
