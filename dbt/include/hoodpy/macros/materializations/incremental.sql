{#-- hoodpy's incremental materialization: orchestration only. The strategy comes from
     adapter.hoodpy_incremental_strategy (validated against the model's table format) and its macro from
     adapter.get_incremental_strategy_macro; a hoodpy strategy writes through the adapter and returns
     {'message': ...}, a plain Spark one returns SQL. --#}

{% materialization incremental, adapter='hoodpy', supported_languages=['sql'] -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set spec = adapter.hoodpy_table_spec(model) -%}
  {%- set target_relation = this.incorporate(type='table', is_hoodpy=spec.is_hoodpy) -%}
  {%- set strategy = adapter.hoodpy_incremental_strategy(model) -%}
  {%- set strategy_macro = adapter.get_incremental_strategy_macro(context, strategy) -%}
  {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set full_refresh_mode = should_full_refresh() -%}
  {%- set rebuild = existing_relation is none or full_refresh_mode or existing_relation.is_view
                    or (existing_relation.is_hoodpy or false) != spec.is_hoodpy -%}

  {{ run_hooks(pre_hooks) }}

  {%- if rebuild -%}
    {%- if existing_relation is not none -%}
      {% do adapter.drop_relation(existing_relation) %}
    {%- endif -%}
    {%- if spec.is_hoodpy and adapter.hoodpy_reads_changes(model) -%}
      {#-- the upstream instants it reads (hoodpy_changes) are stored in the table's first commit --#}
      {%- set message = adapter.hoodpy_create_table_as(target_relation,
                                                       create_table_as(False, target_relation, compiled_code), model) -%}
      {%- call noop_statement('main', message) -%}
        -- {{ message }}
      {%- endcall -%}
    {%- else -%}
      {%- call statement('main') -%}
        {{ create_table_as(False, target_relation, compiled_code) }}
      {%- endcall -%}
    {%- endif -%}
  {%- else -%}
    {%- set temp_relation = make_temp_relation(target_relation) -%}
    {% do run_query(create_table_as(True, temp_relation, compiled_code)) %}
    {%- set existing_relation = existing_relation.incorporate(is_hoodpy=spec.is_hoodpy) -%}
    {%- set retyped = [] -%}
    {%- if spec.is_hoodpy and on_schema_change in ('append_new_columns', 'sync_all_columns') -%}
      {#-- changed column types: Hudi's promotion, or an error naming the column before any change --#}
      {%- set retyped = adapter.hoodpy_check_column_types(existing_relation, temp_relation, model) -%}
    {%- endif -%}
    {%- set dest_columns = process_schema_changes(on_schema_change, temp_relation, existing_relation) -%}
    {%- if spec.is_hoodpy and (on_schema_change == 'sync_all_columns' or retyped) -%}
      {#-- a dropped or retyped column rebuilt the table: the batch view must read the new table's files --#}
      {% do run_query(create_table_as(True, temp_relation, compiled_code)) %}
    {%- endif -%}
    {%- if not dest_columns -%}
      {%- set dest_columns = adapter.get_columns_in_relation(existing_relation) -%}
    {%- endif -%}
    {%- set predicates = config.get('predicates', none) or config.get('incremental_predicates', none) -%}
    {%- set result = strategy_macro({
          'target_relation': target_relation, 'temp_relation': temp_relation,
          'unique_key': spec.record_key, 'dest_columns': dest_columns, 'incremental_predicates': predicates,
          'strategy': strategy}) -%}
    {%- if result is mapping -%}
      {%- call noop_statement('main', result.message) -%}
        -- {{ result.message }}
      {%- endcall -%}
    {%- else -%}
      {%- call statement('main') -%}
        {{ result }}
      {%- endcall -%}
    {%- endif -%}
    {% do adapter.drop_relation(temp_relation.incorporate(type='view')) %}
  {%- endif -%}

  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode) %}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}
