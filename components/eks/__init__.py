"""EKS wing: the cluster, GPU node groups, node role and defaults, Cluster Autoscaler, EFA plugin, node monitoring,
capacity-block schedules."""
