"""The NCCL and libfabric env of each fabric's jobs, as upstream's guides and releases set it (sources per table).

One copy: the pods' fabric (``render/fabric_pod.py``) and the nccl-config ConfigMap (``render/gke_fabric_manifests.py``)
read these tables.
"""

from __future__ import annotations

NVIDIA_LIB64 = "/usr/local/nvidia/lib64"

TCPXO_NCCL_ENV = {
    # container-engine-accelerators gpudirect-tcpxo/README.md, release Nov 19, 2025 (plugin v1.0.14, RxDM v1.0.20)
    "NCCL_FASTRAK_CTRL_DEV": "eth0",
    "NCCL_FASTRAK_IFNAME": "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8",
    "NCCL_SOCKET_IFNAME": "eth0",
    "NCCL_CROSS_NIC": "0",
    "NCCL_PROTO": "Simple,LL128",
    "NCCL_MIN_NCHANNELS": "4",
    "NCCL_TUNER_PLUGIN": "libnccl-tuner.so",
    "NCCL_TUNER_CONFIG_PATH": f"{NVIDIA_LIB64}/a3plus_tuner_config.textproto",
    "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE": f"{NVIDIA_LIB64}/a3plus_guest_config.textproto",
    "NCCL_NVLSTREE_MAX_CHUNKSIZE": "131072",
    "NCCL_P2P_NET_CHUNKSIZE": "524288",
    "NCCL_P2P_PCI_CHUNKSIZE": "524288",
    "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
    "NCCL_FASTRAK_NUM_FLOWS": "2",
    "NCCL_FASTRAK_USE_SNAP": "1",
    "NCCL_FASTRAK_PLUGIN_ACCEPT_TIMEOUT_MS": "600000",
    "NCCL_FASTRAK_ENABLE_CONTROL_CHANNEL": "0",
    "NCCL_BUFFSIZE": "8388608",
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_FASTRAK_ENABLE_HOTPATH_LOGGING": "0",
    "NCCL_FASTRAK_USE_LLCM": "1",
    "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY": "/dev/aperture_devices",
    "NCCL_NVLS_ENABLE": "1",
}
TCPX_NCCL_ENV = {
    # GoogleCloudPlatform/container-engine-accelerators@0e5609b0 gpudirect-tcpx/nccl-config.yaml, "Finalize NCCL config
    # for GKE 1.34+" (run-nccl.sh): Ring,Tree (was Ring), FORCE_ACK dropped as deprecated, flow steering waits
    # 500000 us (the older GKE/GCE guides' 50000 is superseded). The RxDM socket stays at /run/tcpx (upstream picks a
    # prefix with unix_client_prefix_selection.sh; the sidecar here serves it there).
    "NCCL_SOCKET_IFNAME": "eth0",
    "NCCL_GPUDIRECTTCPX_CTRL_DEV": "eth0",
    "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME": "eth1,eth2,eth3,eth4",
    "NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX": "/run/tcpx",
    "NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS": "500000",
    "NCCL_CROSS_NIC": "0",
    "NCCL_ALGO": "Ring,Tree",
    "NCCL_PROTO": "Simple",
    "NCCL_NSOCKS_PERTHREAD": "4",
    "NCCL_SOCKET_NTHREADS": "1",
    "NCCL_DYNAMIC_CHUNK_SIZE": "524288",
    "NCCL_P2P_NET_CHUNKSIZE": "524288",
    "NCCL_P2P_PCI_CHUNKSIZE": "524288",
    "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
    "NCCL_BUFFSIZE": "4194304",
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_P2P_PXN_LEVEL": "0",
    "NCCL_GPUDIRECTTCPX_TX_BINDINGS": "eth1:8-21,112-125;eth2:8-21,112-125;eth3:60-73,164-177;eth4:60-73,164-177",
    "NCCL_GPUDIRECTTCPX_RX_BINDINGS": "eth1:22-35,126-139;eth2:22-35,126-139;eth3:74-87,178-191;eth4:74-87,178-191",
}
GIB_NCCL_ENV = {
    # What gIB v1.1.0's set_nccl_env.sh sets, as GoogleCloudPlatform/cluster-toolkit@10470803 writes it out for
    # entrypoints that never source the script (examples/machine-learning/a3-ultragpu-8g/nemo-framework/Dockerfile:
    # "Set the following to match what is in /usr/local/gib/scripts/set_nccl_env.sh"; a4-highgpu-8g/a4high-vm.yaml).
    # Set in the pod env so `torchrun …` or `python …` get it too; BASH_ENV still sources the script (it wins).
    "NCCL_CROSS_NIC": "0",
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_P2P_NET_CHUNKSIZE": "131072",
    "NCCL_NVLS_CHUNKSIZE": "524288",
    "NCCL_IB_ADAPTIVE_ROUTING": "1",
    "NCCL_IB_QPS_PER_CONNECTION": "4",
    "NCCL_IB_TC": "52",
    "NCCL_IB_FIFO_TC": "84",
}
GIB_TUNER_CONFIG = {"a3-ultragpu-8g": "tuner_config_a3u.txtpb", "a4-highgpu-8g": "tuner_config.txtpb"}
"""gIB's tuner config per machine (same cluster-toolkit files: the A3 Ultra Dockerfile, the A4 VM blueprint)."""


EFA_ENV = {
    # AWS "Run machine learning training on Amazon EKS with Elastic Fabric Adapter"; aws-ofi-nccl docs
    "FI_PROVIDER": "efa",
    "FI_EFA_USE_DEVICE_RDMA": "1",
    "FI_EFA_FORK_SAFE": "1",
    "NCCL_SOCKET_IFNAME": "^lo,docker",
}
