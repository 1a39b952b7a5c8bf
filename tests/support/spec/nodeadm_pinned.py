"""The nodeadm user data EKS GPU pools with instance-store NVMe had before ``podStart`` existed: a pool that does not
declare ``podStart`` must keep it byte for byte (a changed user data rolls every node)."""

NODEADM_RAID0 = """\
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="GPUCLUSTER"

--GPUCLUSTER
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  instance:
    localStorage:
      strategy: RAID0

--GPUCLUSTER--
"""
