"""GKE wing: the cluster, its GPU node pools, node identity, Cloud NAT, fabric networks and image sources."""
