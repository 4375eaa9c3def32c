import { Component, type ErrorInfo, type ReactNode } from 'react';
import { ErrorNotice } from './status.js';

interface Props {
  children: ReactNode;
  /** When this changes (e.g. the path), a crashed page gets another chance. */
  resetKey: string;
}

interface State {
  error: unknown;
  resetKey: string;
}

/** Keeps a crashing page from blanking the whole app: the shell stays, the page shows the error. */
export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: null, resetKey: this.props.resetKey };

  static getDerivedStateFromError(error: unknown): Partial<State> {
    return { error };
  }

  static getDerivedStateFromProps(props: Props, state: State): Partial<State> | null {
    return props.resetKey !== state.resetKey ? { error: null, resetKey: props.resetKey } : null;
  }

  override componentDidCatch(error: unknown, info: ErrorInfo): void {
    console.error('Page crashed', error, info.componentStack);
  }

  override render() {
    if (this.state.error) {
      return (
        <section className="page">
          <ErrorNotice
            error={this.state.error}
            title="This page hit a problem"
            onRetry={() => this.setState({ error: null })}
          />
        </section>
      );
    }
    return this.props.children;
  }
}
