package scontrol

// scontrol's --help (and --usage) text, as Slurm 22.05 prints it
// (src/scontrol/scontrol.c _usage), trailing blanks and tabs included; it
// lists the commands and entities slurm-lite has, then slurm-lite's own
// in a section of their own.

// scontrolHelp is scontrol --help (and --usage, which prints the same).
const scontrolHelp = `scontrol [<OPTION>] [<COMMAND>]                                            
    Valid <OPTION> values are:                                             
     -a, --all      Equivalent to "all" command                          
     -d, --details  Equivalent to "details" command                      
     --federation   Report federated job information if a member of a  one 
     -F, --future   Report information about nodes in "FUTURE" state.    
     -h, --help     Equivalent to "help" command                         
     --hide         Equivalent to "hide" command                         
     --local        Report information only about jobs on the local cluster.
	            Overrides --federation.                                
     -M, --cluster  Equivalent to "cluster" command. Implies --local.    
                    NOTE: SlurmDBD must be up.                             
     -o, --oneliner Equivalent to "oneliner" command                     
     -Q, --quiet    Equivalent to "quiet" command                        
     --sibling      Report information about all sibling jobs on a         
	            federated cluster. Implies --federation option.        
     -u,--uid       Update job as user "uid" instead of the invoking user.
     -v, --verbose  Equivalent to "verbose" command                      
     -V, --version  Equivalent to "version" command                      
									   
    Valid <COMMAND> values are:                                            
     create <SPECIFICATIONS>  create a new reservation.                    
     delete <SPECIFICATIONS>  delete the specified reservation.            
     help                     print this description of use.               
     hold <job_list>          prevent specified job from starting. <job_list>
			      is either a space separate list of job IDs or
			      job names 
     holdu <job_list>         place user hold on specified job (see hold)  
     ping                     print status of slurmctld daemons.           
     release <job_list>       permit specified job to start (see hold)     
     requeue <job_id>         re-queue a batch job                         
     show <ENTITY> [<ID>]     display state of identified entity, default  
			      is all records.                              
     token [lifespan=] [username=] fetch an auth token                     
     uhold <jobid_list>       place user hold on specified job (see hold)  
     update <SPECIFICATIONS>  update job, node or reservation              
     version                  display tool version number.                 
     yield <job_id>|Gpu=<index> [BatchSize=N] [Gpus=N] [GpuMem=SIZE]      
           [Grace=SECS] [NoWait]                                           
			      checkpoint, stop and requeue a job, giving its     
			      GPUs to others (slurm-lite)                        
									   
  <ENTITY> may be "assoc_mgr", "config", "hostlist", "hostlistsorted",   
       "hostnames", "job", "node", "partition" or "reservation"            
									   
  <ID> may be a configuration parameter name, job id, node name, partition 
       name, reservation name, job step id, license name or hostlist or    
       pathname to a list of host names.                                   
									   
  <HOSTLIST> may either be a comma separated list of host names or the     
       absolute pathname of a file (with leading '/' containing host names 
       either separated by commas or new-lines                             
									   
  Node names may be specified using simple range expressions,              
  (e.g. "lx[10-20]" corresponds to lx10, lx11, lx12, ...)                
  The job step id is the job id followed by a period and the step id.      
									   
  <SPECIFICATIONS> are specified in the same format as the configuration   
  file. You may wish to use the "show" keyword then use its output as    
  input for the update keyword, editing as needed.                         
									   
  All commands and options are case-insensitive, although node names and   
  partition names tests are case-sensitive (node names "LX" and "lx"   
  are distinct).                                                       

slurm-lite additions (README.md, "what slurm-lite adds"; man slurm-lite-yield):
     yield                    above: give a job's GPUs away and requeue it
     update NodeName=<node> Gpu=<index>[,<index>...] State=DRAIN|RESUME
                              drain or resume single GPUs
     -dd show job             ReasonDetail= and GPU_UUIDs= lines after
                              Slurm's own
`
