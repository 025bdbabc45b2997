module github.com/day1ai/day1

go 1.24
