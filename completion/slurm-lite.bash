# bash completion for slurm-lite's commands: their options, and scontrol's
# and slurmd-lite's commands. Made by internal/docgen from each command's
# --help; do not edit: go test ./internal/docgen -update rewrites it.
# Installed by make install as share/bash-completion/completions/slurm-lite,
# with a link per command so that bash-completion finds it by name.

_slurm_lite() {
	local cmd=${1##*/} cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local opts= words= after= i
	case $cmd in
	sbatch)
		opts='--account= --array= --batch-size= --bb= --bbf= --begin= --chdir= --checkpoint-interval= --cluster-constraint= --clusters= --comment= --constraint= --container --contiguous --core-spec= --cores-per-socket= --cpu-freq= --cpus-per-gpu= --cpus-per-task= --deadline= --delay-boot= --dependency= --distribution= --error= --exclude= --exclusive --export --export-file= --extra-node-info= --get-user-env --gid= --gpu-bind= --gpu-freq= --gpu-mem= --gpus-per-node= --gpus-per-socket= --gpus-per-task= --gpus= --gres-flags= --gres= --help --hold --ignore-pbs --input= --job-name= --licenses= --mail-type= --mail-user= --mcs-label= --mem-per-cpu= --mem-per-gpu= --mem= --mincpus= --nice --no-kill --no-requeue --nodefile= --nodelist= --nodes= --ntasks-per-core= --ntasks-per-node= --ntasks-per-socket= --ntasks= --output= --overcommit --oversubscribe --parsable --partition= --power= --priority= --profile= --propagate --qos= --quiet --reboot --requeue --reservation= --signal= --sockets-per-node= --spread-job --switches= --thread-spec= --threads-per-core= --time-min= --time= --tmp= --uid= --usage --use-min-nodes --verbose --version --wait --wckey= --wrap --yieldable'
		;;
	squeue)
		opts='--Format= --account= --all --array --array-unique --clusters= --federation --format= --help --hide --iterate= --job= --json --licenses= --local --long --me --name= --noconvert --nodelist= --noheader --partition= --qos= --reservation= --sibling --sort= --start --states= --step= --usage --user= --verbose --version --yaml'
		;;
	scancel)
		opts='--account= --batch --clusters --full --help --hurry --interactive --me --name= --nodelist --partition= --qos= --quiet --reservation= --sibling= --signal= --state= --usage --user= --verbose --version --wckey='
		;;
	scontrol)
		opts='--all --cluster --details --federation --future --help --hide --local --oneliner --quiet --sibling --uid --verbose --version'
		words='create delete help hold holdu ping release requeue show token uhold update version yield'
		case $prev in
		create) after='reservation' ;;
		delete) after='reservation' ;;
		show) after='assoc_mgr config hostlist hostlistsorted hostnames job node partition reservation' ;;
		esac
		;;
	sinfo)
		opts='--Format= --Node --all --clusters= --dead --exact --federation --format= --gpus --help --hide --iterate= --json --list-reasons --local --long --noconvert --nodes= --noheader --partition= --reservation --responding --sort= --states= --summarize --usage --verbose --version --yaml'
		;;
	sacct)
		opts='--accounts --allclusters --allocations --allusers --associations --batch-script --brief --clusters --completion --delimiter --duplicates --endtime --env-vars --federation --file= --format --gid --group --help --helpformat --jobs --json --local --long --name --ncpus= --nnodes= --noconvert --nodelist --noheader --parsable --parsable2 --partition --qos --starttime --state --timelimit-max --timelimit-min --truncate --uid --units= --usage --user --verbose --version --wckeys --whole-hetjob --yaml'
		;;
	sacctmgr)
		opts='--associations --help --immediate --noheader --oneliner --parsable --parsable2 --quiet --readonly --verbose --version'
		;;
	sshare)
		opts='--Users --accounts= --all --cluster= --format= --help --helpformat --long --noheader --parsable --parsable2 --partition --usage --users= --verbose --version'
		;;
	sprio)
		opts='--cluster= --federation --format= --help --jobs --local --long --noheader --norm --partition= --sibling --sort= --usage --user= --verbose --version --weights'
		;;
	sreport)
		opts='--all_clusters --federation --help --local --noheader --parsable --parsable2 --quiet --tres --verbose --version'
		words='cluster job user'
		case $prev in
		cluster) after='AccountUtilizationByUser UserUtilizationByAccount Utilization' ;;
		job) after='SizesByAccount' ;;
		user) after='TopUsage' ;;
		esac
		;;
	srun)
		opts='--account= --acctg-freq= --bb= --bbf= --bcast-exclude= --bcast= --begin= --chdir= --cluster-constraint= --clusters= --comment= --compress --constraint= --container --contiguous --core-spec= --cores-per-socket= --cpu-freq= --cpus-per-gpu= --cpus-per-task= --deadline= --delay-boot= --dependency= --disable-status --distribution= --epilog= --error= --exact --exclude= --exclusive --export= --extra-node-info= --gpu-bind= --gpu-freq= --gpus-per-node= --gpus-per-socket= --gpus-per-task= --gpus= --gres-flags= --gres= --help --het-group= --hold --immediate --input= --job-name= --jobid= --kill-on-bad-exit --label --licenses= --mail-type= --mail-user= --mcs-label= --mem-per-cpu= --mem-per-gpu= --mem= --mincpus= --mpi= --multi-prog --nice --no-allocate --no-kill --nodelist= --nodes= --ntasks-per-core= --ntasks-per-node= --ntasks-per-socket= --ntasks= --output= --overcommit --overlap --oversubscribe --partition= --power= --preserve-env --priority= --profile= --prolog= --propagate --pty --qos= --quiet --quit-on-interrupt --reboot --relative= --reservation= --resv-ports --send-libs --signal= --slurmd-debug= --sockets-per-node= --spread-job --switches= --task-epilog= --task-prolog= --thread-spec= --threads-per-core= --threads= --time-min= --time= --tmp= --unbuffered --usage --use-min-nodes --verbose --version --wait= --wckey='
		;;
	salloc)
		opts='--account= --bb= --bbf= --begin= --bell --chdir= --cluster-constraint= --clusters= --comment= --constraint= --container --contiguous --core-spec= --cores-per-socket= --cpu-freq= --cpus-per-gpu= --cpus-per-task= --deadline= --delay-boot= --dependency= --distribution= --exclude= --exclusive --extra-node-info= --get-user-env --gid= --gpu-bind= --gpu-freq= --gpus-per-node= --gpus-per-socket= --gpus-per-task= --gpus= --gres-flags= --gres= --help --hold --immediate --job-name= --kill-command --licenses= --mail-type= --mail-user= --mcs-label= --mem-per-cpu= --mem-per-gpu= --mem= --mincpus= --nice --no-bell --no-kill --nodefile= --nodelist= --nodes= --ntasks-per-core= --ntasks-per-node= --ntasks-per-socket= --ntasks= --overcommit --oversubscribe --partition= --power= --priority= --profile= --qos= --quiet --reboot --reservation= --signal= --sockets-per-node= --spread-job --switches= --thread-spec= --threads-per-core= --time-min= --time= --tmp= --uid= --usage --use-min-nodes --verbose --version --wckey='
		;;
	slurmd-lite)
		opts='--autodetect --brief --checkpoint= --config-file= --config= --controller= --dir= --filler-limit= --force --foreground --fresh --gpu-mem= --gpus-per-node= --help --json --keep= --live --no-wall --nodes= --outcomes= --parsable2 --policy= --profiles= --rebuild --recalc= --reservation= --restart-time= --scale= --stop-time= --tick= --trace= --window='
		words='run config parse simulate export'
		;;
	*) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		# An option that takes a value: no blank after its "=".
		[[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
		return 0
	fi
	if [[ -n $after ]]; then
		COMPREPLY=($(compgen -W "$after" -- "$cur"))
		return 0
	fi
	if [[ -n $words ]]; then
		for ((i = 1; i < COMP_CWORD; i++)); do
			[[ ${COMP_WORDS[i]} == -* ]] || return 0
		done
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
	fi
	return 0
}
complete -o default -F _slurm_lite sbatch squeue scancel scontrol sinfo sacct sacctmgr sshare sprio sreport srun salloc slurmd-lite
