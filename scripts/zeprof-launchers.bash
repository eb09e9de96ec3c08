# zeprof: which rank of which job this is, from the variables of MPI launchers and batch systems.
# Sourced by zeprof (scripts/zeprof.in), whose variables and helpers it uses and sets; not run
# alone. Checked on its own, its variables look unassigned or unused (SC2154, SC2034).
# shellcheck shell=bash disable=SC2154,SC2034

# ---------------------------------------------------------------------------------------------
# Jobs: is this one rank of a job that an MPI launcher or a batch system started?

job_launcher=            # which launcher's variables name the rank; empty outside a job
job_rank=                # the rank in the job
job_local_rank=          # the rank on this node, when the launcher says
job_local_size=          # how many ranks run on this node, when the launcher says
job_id=                  # the same for every rank of one launch, on every node
job_nodes=               # how many nodes the launch runs on, when the launcher says

# The value of the first of the named variables that is set and not empty.
first_set() {
  local name
  for name; do
    if [ -n "${!name:-}" ]; then
      echo "${!name}"
      return 0
    fi
  done
}

# Slurm lists a step's tasks per node in node order, e.g. "2(x3),1": the count on this node.
slurm_tasks_on_this_node() {
  local list node item count repeat items
  list=$(first_set SLURM_STEP_TASKS_PER_NODE SLURM_TASKS_PER_NODE)
  node=${SLURM_NODEID:-0}
  if [ -z "$list" ] || ! [[ $node =~ ^[0-9]+$ ]]; then
    echo "${SLURM_NTASKS_PER_NODE:-}"
    return 0
  fi
  IFS=, read -r -a items <<<"$list"
  for item in "${items[@]}"; do
    count=${item%%(*}
    repeat=1
    if [[ $item =~ \(x([0-9]+)\) ]]; then repeat=${BASH_REMATCH[1]}; fi
    if [ "$node" -lt "$repeat" ]; then
      echo "$count"
      return 0
    fi
    node=$((node - repeat))
  done
}

# Sets the job_* variables from the launcher's environment; false outside a job. The launchers
# are tried from the most specific: mpirun inside a Slurm or PBS job also sees the batch
# system's variables, but its own name the rank. launch_id names one launch (one mpirun, one
# srun step), batch_id the batch job around it; a job launches several times, so both make the
# job id. ZEPROF_JOB_ID overrides it (a launcher that names no launch, such as Hydra outside a
# batch system).
detect_launcher() {
  local launch_id batch_id
  if [ -n "${OMPI_COMM_WORLD_RANK:-}" ]; then
    job_launcher='Open MPI'
    job_rank=$OMPI_COMM_WORLD_RANK
    job_local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-}
    job_local_size=${OMPI_COMM_WORLD_LOCAL_SIZE:-}
    launch_id=$(first_set PMIX_NAMESPACE OMPI_MCA_ess_base_jobid OMPI_MCA_orte_ess_jobid)
    job_nodes=${OMPI_MCA_orte_num_nodes:-}    # Open MPI 4: the nodes of the job's map
  elif [ -n "${PALS_RANKID:-}" ]; then
    job_launcher=PALS
    job_rank=$PALS_RANKID
    job_local_rank=${PALS_LOCAL_RANKID:-}
    job_local_size=${PALS_LOCAL_SIZE:-}
    launch_id=${PALS_APID:-}
  elif [ -n "${PMI_RANK:-}" ]; then
    job_launcher=MPICH
    job_rank=$PMI_RANK
    job_local_rank=$(first_set MPI_LOCALRANKID PMI_LOCAL_RANK)
    job_local_size=$(first_set MPI_LOCALNRANKS PMI_LOCAL_SIZE)
    launch_id=$(first_set PMI_KVSNAME PMIX_NAMESPACE)
  elif [ -n "${PMIX_RANK:-}" ]; then
    job_launcher=PMIx
    job_rank=$PMIX_RANK
    job_local_rank=${PMIX_LOCAL_RANK:-}
    job_local_size=${PMIX_LOCAL_SIZE:-}
    launch_id=${PMIX_NAMESPACE:-}
  elif [ -n "${SLURM_PROCID:-}" ] && [ -n "${SLURM_STEP_ID:-}" ]; then
    job_launcher=Slurm
    job_rank=$SLURM_PROCID
    job_local_rank=${SLURM_LOCALID:-}
    job_local_size=$(slurm_tasks_on_this_node)
    launch_id=$SLURM_STEP_ID
    job_nodes=${SLURM_STEP_NUM_NODES:-}       # the step's (the allocation may have more)
  else
    return 1
  fi
  [[ $job_rank =~ ^[0-9]+$ ]] || return 1
  [[ $job_local_rank =~ ^[0-9]+$ ]] || job_local_rank=
  [[ $job_local_size =~ ^[0-9]+$ ]] || job_local_size=
  [[ $job_nodes =~ ^[1-9][0-9]{0,8}$ ]] || job_nodes=
  batch_id=$(first_set SLURM_JOB_ID PBS_JOBID LSB_JOBID FLUX_JOB_ID COBALT_JOBID)
  batch_id=${batch_id%%.*}    # PBS: <sequence>.<server>
  if [ -n "${ZEPROF_JOB_ID:-}" ]; then
    job_id=$ZEPROF_JOB_ID
  elif [ -n "$batch_id" ] && [ -n "$launch_id" ]; then
    job_id=$batch_id.$launch_id
  elif [ -n "$batch_id$launch_id" ]; then
    job_id=$batch_id$launch_id
  else
    # Nothing names the launch: the ranks of a node share their parent (the launcher's daemon on
    # the node), so they agree; other nodes do not (docs/cluster.md: give -o or ZEPROF_JOB_ID).
    local stat fields
    read -r stat 2>/dev/null <"/proc/$PPID/stat" || stat=
    read -r -a fields <<<"${stat##*) }"
    job_id=node-$(uname -n)-$PPID-${fields[19]:-0}
  fi
  # A file name, short enough for the socket paths of a daemon whose LTTNG_HOME is under it.
  job_id=${job_id//[^A-Za-z0-9._-]/_}
  if [ ${#job_id} -gt 40 ]; then
    job_id=${job_id:0:28}-$(printf '%s' "$job_id" | cksum | cut -d' ' -f1)
  fi
}
