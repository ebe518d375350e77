module gitlab.com/gitlab-org/fleeting/fleeting/metrics/prometheus

go 1.24
