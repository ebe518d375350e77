module gitlab.com/gitlab-org/fleeting/taskscaler/metrics/prometheus

go 1.24
