{#-- Table services from post-hooks, as Hudi's procedures run by hoodpy's SQL layer:

       post_hook="{{ hoodpy_run_clustering() }}"                       -- the model's clustering config
       post_hook="{{ hoodpy_run_clustering(order=['city'], strategy='z-order') }}"
       post_hook="{{ hoodpy_run_compaction() }}"                       -- merge-on-read: schedule and execute
       post_hook="{{ hoodpy_run_compaction(op='schedule') }}"
       post_hook="{{ hoodpy_run_clean(policy='KEEP_LATEST_FILE_VERSIONS', retained=1) }}"
       post_hook="CALL run_clustering(table => '{{ this }}')"           -- raw CALL works too

     Optional `options` take extra hoodie.* keys, `relation` another table than this model's. --#}

{% macro hoodpy_run_clustering(order=none, strategy=none, options=none, relation=none) -%}
  {%- set args = adapter.hoodpy_service_args(model, 'clustering', {'order': order, 'strategy': strategy,
                                                                     'options': options}) -%}
  call run_clustering(table => '{{ relation or this }}'{{ ', ' ~ args if args }})
{%- endmacro %}

{% macro hoodpy_run_compaction(op=none, options=none, relation=none) -%}
  {%- set args = adapter.hoodpy_service_args(model, 'compaction', {'op': op, 'options': options}) -%}
  call run_compaction(table => '{{ relation or this }}'{{ ', ' ~ args if args }})
{%- endmacro %}

{% macro hoodpy_run_clean(policy=none, retained=none, options=none, relation=none) -%}
  {%- set args = adapter.hoodpy_service_args(model, 'clean', {'policy': policy, 'retained': retained,
                                                               'options': options}) -%}
  call run_clean(table => '{{ relation or this }}'{{ ', ' ~ args if args }})
{%- endmacro %}
